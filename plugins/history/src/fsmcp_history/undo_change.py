"""undo_change: a change undone, all its paths or none; the undo is a change too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ToolResult

from .journal import shown_paths, usable_journal, when

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import UndoChangeInput


def undo_change(args: UndoChangeInput, ctx: ToolContext) -> ToolResult:
    change, paths = usable_journal(ctx).undo(args.id, force=args.force)
    if change.undoes:
        head = f"Change {change.id} (the undo of change {change.undoes}) undone: change {change.undoes} is back"
    else:
        head = f"Change {change.id} ({change.tool}, {when(change.time)}) undone"
    text = (
        f"{head}; {len(paths)} path{'s' if len(paths) != 1 else ''} restored: {shown_paths(paths)}. "
        "This undo is a change too: undoing it puts the change back."
    )
    return ToolResult.text(text, {"id": change.id, "tool": change.tool, "paths": paths})
