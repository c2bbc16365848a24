"""The workspace family's tool definitions."""

from fsmcp import Annotations, Tool

from .models import SetWorkspaceInput

TOOLS = [
    Tool(
        "set_workspace",
        "Set the directory relative paths resolve against (a server may require it first).",
        SetWorkspaceInput,
        "fsmcp_workspace.set_workspace:set_workspace",
        Annotations(read_only=False, destructive=False, idempotent=True),
    ),
]
