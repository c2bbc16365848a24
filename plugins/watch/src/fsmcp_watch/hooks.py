from fsmcp import hookimpl

from . import tools
from .options import Options


@hookimpl
def fsmcp_register_tools(register, settings):
    Options.of(settings.options("watch"))  # a wrong section stops the start (exit 2)
    for tool in tools.TOOLS:
        register(tool)
