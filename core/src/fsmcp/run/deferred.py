"""A host whose plugins load at the first tool call, for a start the tool-list cache answers.

Until then it has what a client asks first (the instructions, the tool list) from the cache
(``catalog.py``) and the roots, made at start-up as for any host.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import catalog

if TYPE_CHECKING:
    from ..api.config import Settings
    from .host import Host
    from .runner import CallRunner
    from ..paths.roots import RootSet

log = logging.getLogger("fsmcp")


class DeferredHost:
    def __init__(self, settings: Settings, roots: RootSet, entry: dict[str, Any], where: Path | None):
        self.settings = settings
        self.roots = roots
        self._entry = entry
        self._where = where
        self._host: Host | None = None

    def listing(self) -> list[dict[str, Any]]:
        return self._entry["tools"] if self._host is None else self._host.listing()

    def instructions(self) -> str:
        return self._entry["instructions"]

    def host(self) -> Host:
        """The host, its plugins loaded at the first call (synchronously: one load for every call waiting)."""
        if self._host is None:
            from .host import Host

            self._host = Host.start(self.settings, roots=self.roots)
            if [t["name"] for t in self._entry["tools"]] != list(self._host.tools):
                # Nothing the key covers changed, yet the tools did: serve the truth, keep nothing.
                log.warning("the installed plugins offer other tools than when this configuration last started; tools/list changed")
                catalog.forget(self._where)
            elif not self._host.clean():
                # It warned only now (a program a plugin needs went missing): the next start says it at once.
                catalog.forget(self._where)
        return self._host

    @property
    def runner(self) -> CallRunner:
        """The host's call runner: asked for by the first call, which loads the plugins."""
        return self.host().runner
