"""fsmcp-workspace: set_workspace and the workspace-relative path policy (``--policy workspace``)."""

from fsmcp import hookimpl

from . import tools
from .policy import NAME, resolve


@hookimpl
def fsmcp_register_tools(register):
    for tool in tools.TOOLS:
        register(tool)


@hookimpl
def fsmcp_resolve_path(raw, access, follow_links, policy, roots, settings):
    if policy != NAME:
        return None
    return resolve(raw, access, follow_links, roots, settings.require_workspace)
