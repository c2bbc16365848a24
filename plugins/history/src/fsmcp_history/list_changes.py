"""list_changes: the journal's changes this server sees, newest first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsmcp import Access, ToolResult

from .journal import shown_paths, usable_journal, when

if TYPE_CHECKING:
    from fsmcp import JournalEntry, ToolContext

    from .models import ListChangesInput

def list_changes(args: ListChangesInput, ctx: ToolContext) -> ToolResult:
    journal = usable_journal(ctx)
    within = None if args.path is None else ctx.fs.resolve(args.path, Access.READ, follow_links=False).path
    found = []
    for change in journal.changes():
        if within is not None and not _touches(change, within):
            continue
        found.append(_entry(change, journal.session))
        if len(found) == args.limit:
            break
    if not found:
        where = f" to {within}" if within is not None else ""
        return ToolResult.text(f"No changes{where} in the journal.", {"changes": []})
    lines = [_line(e) for e in found]
    return ToolResult.text("\n".join(lines), {"changes": found})


def _touches(change: JournalEntry, within: Path) -> bool:
    for p in [*change.paths, *(r.path for r in change.records)]:
        path = Path(p)
        if path == within or path.is_relative_to(within) or within.is_relative_to(path):
            return True
    return False


def _entry(change: JournalEntry, session: str) -> dict[str, Any]:
    return {
        "id": change.id,
        "time": when(change.time),
        "tool": change.tool,
        "paths": list(change.paths) or [r.path for r in change.records],
        "undone": change.undone is not None,
        "undoable": change.undoable,
        "undoes": change.undoes,
        "interrupted": change.interrupted,
        "thisSession": change.session == session,
    }


def _line(e: dict[str, Any]) -> str:
    rolled_back = e["interrupted"] == "rolled back"
    marks = [
        m
        for m, on in (
            ("this session", e["thisSession"]),
            ("interrupted: the server stopped mid-call", e["interrupted"] is not None),
            ("rolled back", rolled_back),
            ("undone", e["undone"] and not rolled_back),
            ("not undoable", not e["undoable"]),
        )
        if on
    ]
    if e["undoes"]:
        marks.append(f"undoes {e['undoes']}")
    suffix = f" ({', '.join(marks)})" if marks else ""
    return f"{e['id']}  {e['time']}  {e['tool']}  {shown_paths(e['paths'])}{suffix}"
