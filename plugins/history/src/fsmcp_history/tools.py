"""The history family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import ListChangesInput, ListChangesOutput, UndoChangeInput, UndoChangeOutput

TOOLS = [
    Tool(
        "list_changes",
        "The server's journal of file changes, newest first: each tool call that changed files is one change "
        "with its id, time, tool and paths. Use an id with undo_change.",
        ListChangesInput,
        "fsmcp_history.history:list_changes",
        READ_ONLY,
        title="List changes",
        output_model=ListChangesOutput,
    ),
    Tool(
        "undo_change",
        "Undo one change (default: the latest not undone): every path it touched goes back byte for byte, modes "
        "too; created files are removed, deleted trees return, moves go back. All paths or none. A path changed "
        "since is EDIT_CONFLICT unless force. The undo is itself a change: undoing it redoes.",
        UndoChangeInput,
        "fsmcp_history.history:undo_change",
        DESTRUCTIVE,
        title="Undo change",
        output_model=UndoChangeOutput,
    ),
]
