"""The pluggy markers of the ``fsmcp`` project. Plugins write ``from fsmcp import hookimpl``."""

import pluggy

PROJECT = "fsmcp"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
