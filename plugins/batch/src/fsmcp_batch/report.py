"""The batch's answer: one block per operation, in order, then a summary, all within the budget.

The budget is shared fairly: a short result is shown whole and what it leaves is split evenly
among the long ones, each cut with a note saying how to see the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsmcp import Blob, ErrorCode, Text, ToolError, ToolResult, fair_shares, json_text, number_runs, truncate

if TYPE_CHECKING:
    from .plan import Step
    from .run import Run


def report(run: Run, budget: int) -> ToolResult:
    summary = _summary(run)
    blocks = [_block(step, run) for step in run.steps]
    shares = fair_shares([len(text) for text in blocks], budget - len(summary) - len(blocks))
    parts: list[Text | Blob] = []
    entries: list[dict[str, Any]] = []
    for step, text, share in zip(run.steps, blocks, shares):
        shown, cut = truncate(text, share, _how_to_see_all(step))
        parts.append(Text(shown))
        outcome = run.outcomes[step.number - 1]
        if isinstance(outcome, ToolResult):
            parts.extend(p for p in outcome.parts if isinstance(p, Blob))
        entries.append(_entry(step, outcome, shown, cut, share))
    parts.append(Text(summary))
    return ToolResult(parts, _data(run, entries))


def failure(run: Run, result: ToolResult) -> ToolError:
    """A transactional batch that stopped did nothing, so the call failed: its report as the error.

    The code is the failed operation's; the summary (what was rolled back) leads, the
    operations' blocks follow, and the json formatter's ``details`` carry the same data.
    """
    stopped = run.stopped_at
    outcome = run.outcomes[stopped.number - 1] if stopped else None
    code = outcome.code if isinstance(outcome, ToolError) else ErrorCode.INTERNAL_ERROR
    texts = [p.text for p in result.parts if isinstance(p, Text)]
    return ToolError(code, "\n".join([texts[-1], "", *texts[:-1]]), result.data)


def _block(step: Step, run: Run) -> str:
    outcome = run.outcomes[step.number - 1]
    head = f"[{step.number}] {step.name}"
    if isinstance(outcome, ToolError):
        return f"{head} ERROR {outcome.code.value}: {outcome.message}"
    if outcome is None:
        failed = run.stopped_at
        why = f"operation {failed.number} failed" if failed else "the batch stopped"
        return f"{head} SKIPPED (not run: {why})"
    text = "\n".join(p.text for p in outcome.parts if isinstance(p, Text))
    return f"{head} OK\n{text}" if text else f"{head} OK"


def _how_to_see_all(step: Step) -> str:
    if step.read_only:
        return f"Only this operation's share of the output budget is shown; run {step.name} on its own (or ask it for less) to see the rest."
    return f"{step.name} ran in full; only its report was cut to this operation's share of the output budget."


def _entry(step: Step, outcome: ToolResult | ToolError | None, shown: str, cut: bool, share: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"operation": step.number, "tool": step.name}
    if outcome is None:
        return {**entry, "status": "skipped"}
    if isinstance(outcome, ToolError):
        return {**entry, "status": "error", "error": {"code": outcome.code.value, "message": outcome.message}}
    result = outcome.data
    # A step's data is held to its share too; past it, the text that was shown stands in.
    if result is None or len(json_text(result)) > share:
        result = {"text": shown.partition("\n")[2]}
        if cut:
            result["truncated"] = True
    return {**entry, "status": "ok", "result": result}


def _data(run: Run, entries: list[dict[str, Any]]) -> dict[str, Any]:
    counts = _counts(run)
    data: dict[str, Any] = {
        "operations": entries,
        **counts,
        "transactional": run.transactional,
        "rolledBack": run.rolled_back,
    }
    if run.rollback_failures:
        data["rollbackFailures"] = run.rollback_failures
    if run.kept:
        data["keptByOthers"] = run.kept
    if run.stayed:
        data["keptMoved"] = [{"path": path, "heldBefore": source} for path, source in run.stayed.items()]
    if run.kept_copies:
        data["keptCopies"] = [{"path": path, "copy": copy} for path, copy in run.kept_copies.items()]
    return data


def _counts(run: Run) -> dict[str, int]:
    outcomes = run.outcomes
    return {
        "ok": sum(isinstance(o, ToolResult) for o in outcomes),
        "failed": sum(isinstance(o, ToolError) for o in outcomes),
        "skipped": sum(o is None for o in outcomes),
    }


def _summary(run: Run) -> str:
    counts = _counts(run)
    stopped = run.stopped_at
    total = len(run.steps)
    where = f"stopped at operation {stopped.number} ({stopped.name})" if stopped else "done"
    line = (
        f"Batch {where}: {total} operation{'s' * (total != 1)}, "
        f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} skipped."
    )
    if stopped is None:
        return line
    changed = [s.number for s in run.steps if not s.read_only and isinstance(run.outcomes[s.number - 1], ToolResult)]
    if run.rollback_failures:
        return (
            f"{line} ROLLBACK INCOMPLETE: these could not be put back: {'; '.join(run.rollback_failures)}. "
            "Their saved copies stay where each says until you remove them: read them to put back what you need."
            + _kept_copies(run.kept_copies)
        )
    if run.rolled_back and run.kept:
        undone = f"the changes of {_operations(changed)} were undone" if changed else "no operation had changed anything"
        one = len(run.kept) == 1
        return (
            f"{line} Rolled back: {undone}, except at {', '.join(run.kept)}: another call changed "
            f"{'it' if one else 'them'} (or a directory this batch made for {'it' if one else 'them'}) after this batch did "
            f"and before the rollback, so {'it was' if one else 'they were'} left as that call left {'it' if one else 'them'} "
            "(putting back what was there before would have destroyed that change). "
            "Read them to decide what they should hold; list_changes shows who changed them."
            + "".join(
                f" {path} was left where this batch had moved {source}: it holds what {source} held before the batch "
                "(its only copy); move it back or keep it, as you decide."
                for path, source in run.stayed.items()
            )
            + _kept_copies(run.kept_copies)
        )
    if run.rolled_back:
        undone = f"the changes of {_operations(changed)} were undone" if changed else "no operation had changed anything"
        return f"{line} Rolled back: {undone}; every file is as it was before the batch."
    if changed:
        return f"{line} Not rolled back (transactional is off): the changes of {_operations(changed)} stay."
    return f"{line} Nothing was changed."


def _kept_copies(copies: dict[str, str]) -> str:
    """Where the copies of what the paths not put back held before the batch are kept (none: empty)."""
    if not copies:
        return ""
    them = "it" if len(copies) == 1 else "them"
    said = [f" What {path} held before the batch is kept in {copy}." for path, copy in copies.items()]
    more = f" {len(said) - 10} more copies are kept, each named in the data (keptCopies)." if len(said) > 10 else ""
    return "".join(said[:10]) + more + f" No server removes {them}: read {them} to put back what you need, then remove {them}."


def _operations(numbers: list[int]) -> str:
    """``operation 2``; ``operations 1-3, 5``."""
    return f"operation {numbers[0]}" if len(numbers) == 1 else f"operations {number_runs(numbers)}"
