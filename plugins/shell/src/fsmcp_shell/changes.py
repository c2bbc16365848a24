"""What a program changes: it runs over a copy-on-write view of the read-write roots
(:class:`fsmcp.ProgramView`), and what it wrote there is applied to the roots when it ends, as
the call's one change in the journal, which ``undo_change`` takes back; with ``dryRun`` it is
only shown. Where the kernel cannot make the view, the program writes to the roots directly
and the result says that its changes cannot be undone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from fsmcp import ErrorCode, ProgramView, ToolContext, ToolError, commit_view, shown_name

from .process import Finished

SHOWN = 20
"""Names listed in the text per kind of change; the rest are counted ("and N more")."""


@dataclass
class Viewed:
    """A program's end and what became of its changes."""

    done: Finished
    outcome: Any | None
    """What the commit (or the preview) found (:func:`fsmcp.commit_view`); None without a view."""
    why_not: str | None
    """Why the program ran without a view (its changes cannot be undone), or None."""
    dry_run: bool

    @property
    def writes(self) -> bool:
        """Whether the program could change anything (a read-only command runs over no view)."""
        return self.outcome is not None or self.why_not is not None


async def run_viewed(ctx: ToolContext, *, dry_run: bool, budget: int, run: Callable[[ProgramView | None], Awaitable[Finished]]) -> Viewed:
    """``run`` the program over a view of the roots, then apply (or, ``dry_run``, only read) what it wrote."""
    view = ProgramView.open(ctx)
    try:
        if view.why_not is not None:
            if dry_run:
                raise ToolError(
                    ErrorCode.INVALID_PARAMS,
                    f"dryRun needs a copy-on-write view of the roots, and {view.why_not}; nothing was run. Run it without dryRun "
                    "(its changes then cannot be undone), or look at what it would do another way",
                )
            return Viewed(await run(None), None, view.why_not, dry_run)
        done = await run(view)
        if view.why_not is not None:  # given up at the start (a file read by its identity)
            return Viewed(done, None, view.why_not, dry_run)
        outcome = await commit_view(ctx, view, dry_run=dry_run, budget=budget)
        return Viewed(done, outcome, None, dry_run)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(view.close)


def changes_text(viewed: Viewed) -> str | None:
    """The lines the result adds about what the program changed (bounded: :data:`SHOWN` names a
    kind), or None for a read-only command and for one that changed nothing."""
    if not viewed.writes:
        return None
    if viewed.why_not is not None:
        return f"changes: not recorded ({viewed.why_not}): what it changed cannot be undone"
    outcome = viewed.outcome
    kinds = [(kind, list(getattr(outcome, kind))) for kind in ("created", "modified", "deleted")]
    if not any(names for _, names in kinds) and not outcome.conflicts and not outcome.refused:
        return "changes: none (dryRun)" if viewed.dry_run else None
    counted = ", ".join(f"{len(names):,} {kind}" for kind, names in kinds if names) or "nothing applied"
    if viewed.dry_run:
        lines = [f"changes (dryRun: nothing was applied, the roots are as they were): {counted}"]
    else:
        lines = [f"changes: {counted} (one change: undo_change takes it back)"]
    lines += [f"{kind}: {_names(names)}" for kind, names in kinds if names]
    for conflict in outcome.conflicts:
        lines.append(f"conflict: {conflict}")
    for refused in outcome.refused:
        lines.append(f"refused: {refused}")
    if viewed.dry_run and outcome.diff:
        lines.append("diff:\n" + outcome.diff.rstrip("\n"))
    return "\n".join(lines)


def changes_data(viewed: Viewed) -> dict[str, Any]:
    """The same as data: ``changes``, ``changeId`` (filled in by the host once the journal kept the change)."""
    if not viewed.writes:
        return {}
    if viewed.outcome is None:
        return {"changes": None}
    outcome = viewed.outcome
    data: dict[str, Any] = {
        "changes": {kind: list(getattr(outcome, kind)) for kind in ("created", "modified", "deleted")},
        "conflicts": [str(c) for c in outcome.conflicts],
        "refused": [str(r) for r in outcome.refused],
    }
    if viewed.dry_run:
        data["diff"] = outcome.diff
    else:
        data["changeId"] = None
    return data


def _names(names: list[str]) -> str:
    shown = ", ".join(shown_name(name) for name in names[:SHOWN])
    return shown if len(names) <= SHOWN else f"{shown} and {len(names) - SHOWN:,} more"
