"""One tool call's change to the files, however many paths it touches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio

from ..api import audit
from ..api.errors import ErrorCode, ToolError
from .roots import ResolvedPath


def refuse_read_only(tool: Any, paths: Iterable[ResolvedPath]) -> None:
    """Raise when ``tool`` (the tool of the call about to change ``paths``, None for the host's own
    work) is declared read-only (``readOnlyHint``): asked by every primitive that changes files,
    and by an undo, before anything changes."""
    if tool is None or not tool.annotations.read_only:
        return
    raise read_only_refusal(tool, f"change {', '.join(str(p.path) for p in list(paths)[:3])}")


def read_only_refusal(tool: Any, tried: str) -> ToolError:
    """What a call of ``tool``, declared read-only, is told when it ``tried`` a change (``change
    <paths>``, ``run <tool>, which changes files``, ``move the workspace to <path>``)."""
    # A plugin's bug, not the client's, and a hole were it let through: a read-only tool may run on
    # the event loop (quick), and consent lets it reach a protected path its user allowed it to read.
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"{tool.name} (plugin {tool.plugin}) is declared read-only (readOnlyHint) but tried to {tried}; nothing "
        "was changed. The plugin is at fault: its author must declare the tool as one that changes files",
    )


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
    ``number`` is the change's number in the journal once the journal kept it (its after-change
    hook), else None; a result whose data holds ``changeId`` gets it there (the host's runner).
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
        self.number: int | None = None
        self.snapshots: list[Any] = []
        """The call's live snapshots (:meth:`fsmcp.paths.fs.FileSystem.snapshot`), told of every change its primitives make."""
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
                if (audited := audit.CHANGED.get()) is not None:
                    audited.extend(str(p.path) for p in new)
                self._announce(self, new, call)

    def order(self, paths: Iterable[ResolvedPath], *, tree: bool = True, call: Any = None) -> None:
        """Wait for the programs running (:class:`Order`) when what arrives at ``paths`` could
        show one a protected file: a directory tree (``tree``), or a path that is protected.

        Once waited, the call keeps its place until it ends (the host's ``_finish`` lets it go):
        a rollback or a later step of the call puts back what it likes meanwhile. The wait ends
        when ``call`` (the tool call that waits, as for :meth:`before`) is cancelled."""
        if tree or any(self._protected(p) for p in paths):
            ORDER.change(self, call)


# -- the order of changes and programs ---------------------------------------------------

WAIT = 0.05
"""Seconds between two looks: a change waiting in its worker thread looks for its call's
cancellation, a program waiting on the event loop for the changes to end."""


class Order:
    """The server's changes that could show a program a protected file, and its programs: one after the other.

    A program is shown the protected files that exist when it starts: masked by mounts, or left
    out of its Landlock ruleset. Rules and mounts hold on what was there; a directory holding a
    ``.env`` that the server moves or copies into view while the program runs would be seen whole.
    So such a change and a program never overlap: the change waits until no program runs, and a
    program starts only once no other call's such change is under way (its own call's earlier
    changes are done: they were made one after the other). A program holds its place until its
    call ends (the plugins kill and reap the process group before that), a change until its call ends.

    Which changes wait is decided by :meth:`Change.order`, with what the primitives
    (:mod:`fsmcp.paths.fs`) say of what they do; docs/security.md ("A fixed set of hidden files")
    lists them. The journal's copy of a directory into its own store inside a root waits too: made
    after a program started, it would not be hidden from it. A primitive that says nothing is ordered.

    A change waiting here blocks new programs, so a stream of commands cannot keep it waiting for
    ever; it still waits for every program already running, up to their time limits, and gives up
    when its call is cancelled. The order is this process's: two server processes on one tree are
    not ordered with each other.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._changes: set[Any] = set()
        """The calls' ordered changes under way, until their calls end."""
        self._programs: dict[Any, int] = {}
        """Programs started, by the call that started them, until that call ends."""
        self._waiting = 0
        """Changes waiting for programs to end: no program starts meanwhile."""

    def change(self, change: Any, call: Any = None) -> None:
        """Before ``change`` could bring a protected file into view: wait (in a worker thread) until no program runs.

        ``call`` is the tool call that waits (a :class:`fsmcp.ToolContext`): the wait ends when it is cancelled."""
        with self._cond:
            if not self._programs:
                self._changes.add(change)
                return
            self._waiting += 1
            try:
                while self._programs:
                    self._cond.wait(WAIT)
                    if call is not None:
                        call.check_cancelled()
            finally:
                self._waiting -= 1
            self._changes.add(change)

    def changed(self, change: Any) -> None:
        """``change``'s call has ended."""
        with self._cond:
            self._changes.discard(change)

    async def program(self, call: Any, change: Any) -> None:
        """Before ``call`` starts a program: wait until no change but its own (``change``) is under way.

        A call that started one already (a probe, then the command) holds its place: no other
        change has begun since, and one waiting for it must not be waited for in turn."""
        while True:
            with self._cond:
                if call in self._programs or (not self._waiting and self._changes <= {change}):
                    self._programs[call] = self._programs.get(call, 0) + 1
                    call.ordered = True  # the host calls ended(call) when the call ends
                    return
            await anyio.sleep(WAIT)

    def ended(self, call: Any) -> None:
        """``call`` has ended, and with it every program it started."""
        with self._cond:
            if self._programs.pop(call, None) is not None:
                self._cond.notify_all()


ORDER = Order()
