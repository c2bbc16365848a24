from fsmcp import hookimpl

from . import tools


@hookimpl
def fsmcp_register_tools(register, settings):
    for tool in tools.tools_for(settings):
        register(tool)
