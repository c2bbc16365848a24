"""One tool call's change to the files, however many paths it touches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..api import audit
from .order import ORDER
from .roots import ResolvedPath


class Change:
    """What one tool call changes: the host makes one per call and announces every path to it.

    ``tool`` is the name of the tool called (a tool another one runs, as in a batch, adds to
    its caller's change). ``session`` is the id of the client session that made the call
    (:class:`fsmcp.paths.guard.Session`). ``paths`` are the paths announced so far, each once, in order.
    ``state`` is for the implementations of the change hooks, each under its plugin's name.
    ``notes`` are sentences the host adds to the tool's result. ``protected`` is the host's
    answer whether a path is protected (the secrets policy); without one, every path is.
    ``transactional`` is the tool's word that the change is all or nothing (a transactional
    batch): cut short by a crash, it is rolled back at the next start rather than kept.
    """

    def __init__(
        self,
        tool: str,
        session: str,
        announce: Callable[[Change, list[ResolvedPath], Any], None],
        protected: Callable[[ResolvedPath], bool] = lambda path: True,
    ):
        self.tool = tool
        self.session = session
        self.time = time.time()
        self.paths: list[ResolvedPath] = []
        self.state: dict[str, Any] = {}
        self.notes: list[str] = []
        self.transactional = False
        self._seen: set[Path] = set()
        self._announce = announce
        self._protected = protected
        # Parallel inner calls of one batch share the change: its hooks see one path at a time.
        self._lock = threading.RLock()
        self._steps = 0
        self._stepped = threading.Condition(self._lock)

    def join(self) -> None:
        """A call that adds to this change (a batch's step) starts; :meth:`leave` when it has returned."""
        with self._lock:
            self._steps += 1

    def leave(self) -> None:
        with self._lock:
            self._steps -= 1
            self._stepped.notify_all()

    def settle(self) -> None:
        """Wait until no step runs: a cancelled batch's abandoned step stops at its next check
        for cancellation, and what it changed until then belongs to this change."""
        with self._lock:
            self._stepped.wait_for(lambda: self._steps == 0)

    def before(self, paths: Iterable[ResolvedPath], *, tree: bool = True, call: Any = None) -> None:
        """Announce paths about to change; each reaches ``fsmcp_before_change`` once per call.

        ``call`` is the tool call whose primitive announces them (its :class:`fsmcp.ToolContext`:
        the call itself or a step of it, as a batch's): the hooks get its file system, and a wait
        ends when it is cancelled. ``tree=False`` is the primitive's word that no directory arrives whole at any of them
        (a file written, a link or an empty directory made, an entry removed). Unless it says
        so, first :meth:`order`."""
        paths = list(paths)
        if not paths:
            return
        with self._lock:
            self.order(paths, tree=tree, call=call)
            new = []
            for p in paths:
                if p.path not in self._seen:
                    self._seen.add(p.path)
                    new.append(p)
            if new:
                self.paths.extend(new)
                audit.changed(str(p.path) for p in new)
                self._announce(self, new, call)

    def order(self, paths: Iterable[ResolvedPath], *, tree: bool = True, call: Any = None) -> None:
        """Wait for the programs running (:mod:`fsmcp.paths.order`) when what arrives at ``paths`` could
        show one a protected file: a directory tree (``tree``), or a path that is protected.

        Once waited, the call keeps its place until it ends (the host's ``_finish`` lets it go):
        a rollback or a later step of the call puts back what it likes meanwhile. The wait ends
        when ``call`` (the tool call that waits, as for :meth:`before`) is cancelled."""
        if tree or any(self._protected(p) for p in paths):
            ORDER.change(self, call)
