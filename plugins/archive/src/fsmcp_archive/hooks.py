from fsmcp import hookimpl

from . import tools
from .options import Limits


@hookimpl
def fsmcp_register_tools(register, settings):
    Limits.of(settings.options("archive"))  # a wrong section stops the start (exit 2)
    for tool in tools.TOOLS:
        register(tool)
