"""list_changes and undo_change: the host's journal, read and undone through the host."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsmcp import Access, ErrorCode, ToolError, ToolResult

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import ListChangesInput, UndoChangeInput

_SHOWN_PATHS = 5
_INTERRUPTED = ("kept", "rolled back")
"""What the journal's start did with a call cut short (``meta.json`` is read as untrusted input)."""


def list_changes(args: ListChangesInput, ctx: ToolContext) -> ToolResult:
    journal = _journal(ctx)
    within = None if args.path is None else ctx.fs.resolve(args.path, Access.READ, follow_links=False).path
    found = []
    for meta in journal.changes():
        if not _visible(ctx, meta) or (within is not None and not _touches(meta, within)):
            continue
        found.append(_entry(meta, ctx))
        if len(found) == args.limit:
            break
    if not found:
        where = f" to {within}" if within is not None else ""
        return ToolResult.text(f"No changes{where} in the journal.", {"changes": []})
    lines = [_line(e) for e in found]
    return ToolResult.text("\n".join(lines), {"changes": found})


def undo_change(args: UndoChangeInput, ctx: ToolContext) -> ToolResult:
    journal = _journal(ctx)
    meta, paths = journal.undo(ctx.fs, args.id, args.force, lambda m: _visible(ctx, m), ctx.change.session)
    if meta.get("undoes"):
        head = f"Change {meta['id']} (the undo of change {meta['undoes']}) undone: change {meta['undoes']} is back"
    else:
        head = f"Change {meta['id']} ({meta['tool']}, {_when(meta['time'])}) undone"
    text = (
        f"{head}; {len(paths)} path{'s' if len(paths) != 1 else ''} restored: {_paths(paths)}. "
        "This undo is a change too: undoing it puts the change back."
    )
    return ToolResult.text(text, {"id": meta["id"], "tool": meta["tool"], "paths": paths})


def _journal(ctx: ToolContext) -> Any:
    if ctx.journal is None:
        raise ToolError(
            ErrorCode.INTERNAL_ERROR,
            'the server\'s change journal is off (journal = "off"), so there are no changes to list or undo; the operator can turn it on',
        )
    return ctx.journal


def _visible(ctx: ToolContext, meta: dict[str, Any]) -> bool:
    # A journal may be shared by servers over other roots: each sees only changes inside its own.
    return any(ctx.fs.roots.containing(Path(r["path"])) is not None for r in meta["records"]) or any(
        ctx.fs.roots.containing(Path(p)) is not None for p in meta["paths"]
    )


def _touches(meta: dict[str, Any], within: Path) -> bool:
    for p in [*meta["paths"], *(r["path"] for r in meta["records"])]:
        path = Path(p)
        if path == within or path.is_relative_to(within) or within.is_relative_to(path):
            return True
    return False


def _entry(meta: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "id": meta["id"],
        "time": _when(meta["time"]),
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
    return f"{e['id']}  {e['time']}  {e['tool']}  {_paths(e['paths'])}{suffix}"


def _paths(paths: list[str]) -> str:
    shown = ", ".join(paths[:_SHOWN_PATHS])
    more = len(paths) - _SHOWN_PATHS
    return f"{shown} and {more:,} more" if more > 0 else shown


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
