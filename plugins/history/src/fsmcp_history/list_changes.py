"""list_changes: the journal's changes this server sees, newest first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsmcp import Access, ToolResult

from .journal import shown_paths, usable_journal, visible, when

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import ListChangesInput

_INTERRUPTED = ("kept", "rolled back")
"""What the journal's start did with a call cut short (``meta.json`` is read as untrusted input)."""


def list_changes(args: ListChangesInput, ctx: ToolContext) -> ToolResult:
    journal = usable_journal(ctx)
    within = None if args.path is None else ctx.fs.resolve(args.path, Access.READ, follow_links=False).path
    found = []
    for meta in journal.changes():
        if not visible(ctx, meta) or (within is not None and not _touches(meta, within)):
            continue
        found.append(_entry(meta, ctx))
        if len(found) == args.limit:
            break
    if not found:
        where = f" to {within}" if within is not None else ""
        return ToolResult.text(f"No changes{where} in the journal.", {"changes": []})
    lines = [_line(e) for e in found]
    return ToolResult.text("\n".join(lines), {"changes": found})


def _touches(meta: dict[str, Any], within: Path) -> bool:
    for p in [*meta["paths"], *(r["path"] for r in meta["records"])]:
        path = Path(p)
        if path == within or path.is_relative_to(within) or within.is_relative_to(path):
            return True
    return False


def _entry(meta: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "id": meta["id"],
        "time": when(meta["time"]),
        "tool": meta["tool"],
        "paths": meta["paths"] or [r["path"] for r in meta["records"]],
        "undone": meta["undone"] is not None,
        "undoable": not meta["reason"],
        "undoes": meta.get("undoes"),
        "interrupted": meta.get("interrupted") if meta.get("interrupted") in _INTERRUPTED else None,
        "thisSession": meta["session"] == ctx.change.session,
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
