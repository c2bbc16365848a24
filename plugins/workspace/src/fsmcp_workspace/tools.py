"""The workspace family's tool definitions."""

from fsmcp import Annotations, Tool

from .models import SetWorkspaceInput
from .workspace import set_workspace

TOOLS = [
    Tool(
        "set_workspace",
        "Choose the workspace: the directory that relative paths resolve against from now on. It must be an "
        "existing directory inside the allowed directories (list_allowed_directories shows them). When the "
        "server requires a workspace, every other file tool refuses to work until this is called.",
        SetWorkspaceInput,
        set_workspace,
        Annotations(read_only=False, destructive=False, idempotent=True),
        title="Set workspace",
    ),
]
