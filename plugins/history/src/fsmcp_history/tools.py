"""The history family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import ListChangesInput, ListChangesOutput, UndoChangeInput, UndoChangeOutput

TOOLS = [
    Tool(
        "list_changes",
        "The journal of file changes, newest first, one per call.",
        ListChangesInput,
        "fsmcp_history.list_changes:list_changes",
        READ_ONLY,
        output_model=ListChangesOutput,
    ),
    Tool(
        "undo_change",
        "Undo a change, all its paths or none, byte for byte; a path changed since needs force. "
        "Undoing an undo redoes.",
        UndoChangeInput,
        "fsmcp_history.undo_change:undo_change",
        DESTRUCTIVE,
        output_model=UndoChangeOutput,
    ),
]
