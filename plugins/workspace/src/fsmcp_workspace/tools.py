"""The workspace family's tool definitions."""

from fsmcp import Annotations, Tool

from .models import SetWorkspaceInput
from .workspace import set_workspace

TOOLS = [
    Tool(
        "set_workspace",
        "Choose the workspace: the directory relative paths resolve against from now on, an existing one inside "
        "the allowed directories. When the server requires a workspace, other file tools refuse to work until "
        "it is set.",
        SetWorkspaceInput,
        set_workspace,
        Annotations(read_only=False, destructive=False, idempotent=True),
        title="Set workspace",
    ),
]
