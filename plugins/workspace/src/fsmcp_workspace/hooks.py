"""fsmcp-workspace: set_workspace and the workspace-relative path policy (``--policy workspace``)."""

from dataclasses import replace

from fsmcp import READ_ONLY, hookimpl

from . import tools
from .policy import NAME, resolve


@hookimpl
def fsmcp_register_tools(register, settings):
    for tool in tools.TOOLS:
        # It changes only where relative paths lead, never a file: under --read-only it stays, as a read.
        register(replace(tool, annotations=READ_ONLY) if settings.read_only else tool)


@hookimpl
def fsmcp_resolve_path(raw, access, follow_links, policy, roots):
    if policy != NAME:
        return None
    return resolve(raw, access, follow_links, roots)
