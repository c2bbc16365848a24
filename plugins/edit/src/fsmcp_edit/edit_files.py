"""edit_files: edit_file's edits on many files, each reported; atomic, all or none written."""

from __future__ import annotations

from fsmcp import Access, ResolvedPath, ToolContext, ToolError, ToolResult, truncate

from .edit_file import CUT_PREVIEW, CUT_WRITTEN
from .files import expand
from .models import EditFilesInput
from .plan import Plan, commit, plan_edit


def edit_files(args: EditFilesInput, ctx: ToolContext) -> ToolResult:
    targets = expand(ctx, list(args.paths), Access.READ if args.dry_run else Access.WRITE)
    outcomes: list[tuple[str, Plan | ToolError]] = []
    for done, (path, target) in enumerate(targets):
        ctx.check_cancelled()
        ctx.progress(done, len(targets), path)
        outcomes.append((path, _plan(ctx, target, args)))
    failed = [o for _, o in outcomes if isinstance(o, ToolError)]
    if args.atomic and failed:
        raise ToolError(
            failed[0].code,
            f"atomic: {len(failed)} of {len(outcomes)} files failed, so nothing was written anywhere:\n" + _report(outcomes, diffs=False),
        )
    if not args.dry_run:
        outcomes = _write(ctx, outcomes, args.atomic)
    edited = sum(1 for _, o in outcomes if isinstance(o, Plan) and o.changed)
    failures = sum(1 for _, o in outcomes if isinstance(o, ToolError))
    head = (
        f"{'Dry run (nothing written): ' if args.dry_run else ''}{len(outcomes)} file{'s' if len(outcomes) != 1 else ''}: "
        f"{edited} {'would change' if args.dry_run else 'edited'}, {len(outcomes) - edited - failures} unchanged, {failures} failed."
    )
    text, _ = truncate(f"{head}\n{_report(outcomes, diffs=True)}", ctx.budget, CUT_PREVIEW if args.dry_run else CUT_WRITTEN)
    data = [
        {"path": path, "error": {"code": o.code.value, "message": o.message}} if isinstance(o, ToolError) else o.data(not args.dry_run and o.changed)
        for path, o in outcomes
    ]
    return ToolResult.text(text, {"files": data})


def _plan(ctx: ToolContext, target: ResolvedPath | ToolError, args: EditFilesInput) -> Plan | ToolError:
    if isinstance(target, ToolError):
        return target
    try:
        # atomic: the bytes read put a file back if a later one cannot be written.
        return plan_edit(ctx, target, args.edits, keep_old=args.atomic and not args.dry_run)
    except ToolError as exc:
        return exc


def _write(ctx: ToolContext, outcomes: list[tuple[str, Plan | ToolError]], atomic: bool) -> list[tuple[str, Plan | ToolError]]:
    written: list[Plan] = []
    out: list[tuple[str, Plan | ToolError]] = []
    for path, outcome in outcomes:
        if isinstance(outcome, Plan) and outcome.changed:
            try:
                commit(ctx, outcome)
                written.append(outcome)
            except ToolError as exc:
                if atomic:
                    raise _rolled_back(ctx, outcome, exc, written) from None
                outcome = exc
        out.append((path, outcome))
    return out


def _rolled_back(ctx: ToolContext, failed: Plan, exc: ToolError, written: list[Plan]) -> ToolError:
    """Put back the files already written, from the bytes they had, and say how that went."""
    lost = []
    for plan in reversed(written):
        try:
            assert plan.old is not None
            ctx.fs.write_atomic(plan.target, plan.old, make_parents=False)
        except ToolError as err:
            lost.append(f"{plan.target}: [error {err.code.value}] {err.message}")
    message = f"atomic: writing {failed.target} failed ({exc.message}); "
    if not lost:
        return ToolError(exc.code, message + f"the {len(written)} file(s) already written were restored, so nothing changed")
    return ToolError(exc.code, message + "these files could not be restored and hold the edit:\n" + "\n".join(lost))


def _report(outcomes: list[tuple[str, Plan | ToolError]], *, diffs: bool) -> str:
    lines = []
    for path, outcome in outcomes:
        if isinstance(outcome, ToolError):
            lines.append(f"{path}: [error {outcome.code.value}] {outcome.message}")
        elif not outcome.changed:
            lines.append(f"{path}: OK (no changes)")
        else:
            lines.append(f"{path}: OK {outcome.summary()}")
            if diffs:
                lines.append(outcome.shown_diff())
    return "\n".join(lines)
