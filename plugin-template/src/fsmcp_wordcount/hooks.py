"""The plugin's hook implementations: only ``@hookimpl`` functions; the tools live in ``tools.py``."""

from fsmcp import hookimpl

from . import tools


@hookimpl
def fsmcp_register_tools(register):
    for tool in tools.TOOLS:
        register(tool)
