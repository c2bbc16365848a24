"""The workspace family's tool definitions."""

from fsmcp import Annotations, Tool

from .models import SetWorkspaceInput
from .workspace import set_workspace

TOOLS = [
    Tool(
        "set_workspace",
        "Set the directory relative paths resolve against (a server may require it first).",
        SetWorkspaceInput,
        set_workspace,
        Annotations(read_only=False, destructive=False, idempotent=True),
    ),
]
