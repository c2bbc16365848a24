"""The history family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import ListChangesInput, ListChangesOutput, UndoChangeInput, UndoChangeOutput

TOOLS = [
    Tool(
        "list_changes",
        "The server's journal of file changes, newest first: one per tool call that changed files, with id, "
        "time, tool and paths.",
        ListChangesInput,
        "fsmcp_history.history:list_changes",
        READ_ONLY,
        title="List changes",
        output_model=ListChangesOutput,
    ),
    Tool(
        "undo_change",
        "Undo a change, all paths or none: each goes back byte for byte, modes too; created files go, deleted "
        "trees return, moves go back. A path changed since is EDIT_CONFLICT unless force. The undo is a change: "
        "undoing it redoes.",
        UndoChangeInput,
        "fsmcp_history.history:undo_change",
        DESTRUCTIVE,
        title="Undo change",
        output_model=UndoChangeOutput,
    ),
]
