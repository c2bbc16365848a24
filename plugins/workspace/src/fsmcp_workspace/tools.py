"""The workspace family's tool definitions."""

from fsmcp import Annotations, Tool

from .models import SetWorkspaceInput
from .workspace import set_workspace

TOOLS = [
    Tool(
        "set_workspace",
        "Choose the directory relative paths resolve against from now on. When the server requires a workspace, "
        "other tools refuse to work until it is set.",
        SetWorkspaceInput,
        set_workspace,
        Annotations(read_only=False, destructive=False, idempotent=True),
    ),
]
