"""undo_change: a change undone, all its paths or none; the undo is a change too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ToolResult

from .journal import shown_paths, usable_journal, visible, when

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import UndoChangeInput


def undo_change(args: UndoChangeInput, ctx: ToolContext) -> ToolResult:
    journal = usable_journal(ctx)
    meta, paths = journal.undo(ctx.fs, args.id, args.force, lambda m: visible(ctx, m), ctx.change.session)
    if meta.get("undoes"):
        head = f"Change {meta['id']} (the undo of change {meta['undoes']}) undone: change {meta['undoes']} is back"
    else:
        head = f"Change {meta['id']} ({meta['tool']}, {when(meta['time'])}) undone"
    text = (
        f"{head}; {len(paths)} path{'s' if len(paths) != 1 else ''} restored: {shown_paths(paths)}. "
        "This undo is a change too: undoing it puts the change back."
    )
    return ToolResult.text(text, {"id": meta["id"], "tool": meta["tool"], "paths": paths})
