"""The server's changes that could show a program a protected file, and its programs: one after the other.

A program is shown the protected files that exist when it starts: masked by mounts, or left
out of its Landlock ruleset. Rules and mounts hold on what was there; a directory holding a
``.env`` that the server moves or copies into view while the program runs would be seen whole.
So such a change and a program never overlap: the change waits until no program runs, and a
program starts only once no other call's such change is under way (its own call's earlier
changes are done: they were made one after the other). A program holds its place until its
call ends (the plugins kill and reap the process group before that), a change until its call ends.

Which changes wait is decided by :meth:`fsmcp.paths.change.Change.order`, with what the primitives
(:mod:`fsmcp.paths.fs`) say of what they do: one that moves or copies a directory, removes one (its
copy in the journal, or the call's rollback, may bring it back), changes a mode (a directory
the listing could not read may open), saves a directory for a rollback (a snapshot), puts
saved trees back (undo), has the journal copy a directory into its own inside a root (made
after a program started, it is not hidden from it), or touches a protected path. A primitive
that says nothing is ordered. Writing, editing, appending to, linking, removing a file or
making an empty directory, under a name nothing protects, neither waits nor holds a program back.

A change waiting here blocks new programs, so a stream of commands cannot keep it waiting for
ever; it still waits for every program already running, up to their time limits, and gives up
when its call is cancelled. The order is this process's: two server processes on one tree are
not ordered with each other.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio

WAIT = 0.05
"""Seconds between two looks: a change waiting in its worker thread looks for its call's
cancellation, a program waiting on the event loop for the changes to end."""


class Order:
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
                    return
            await anyio.sleep(WAIT)

    def ended(self, call: Any) -> None:
        """``call`` has ended, and with it every program it started."""
        with self._cond:
            if self._programs.pop(call, None) is not None:
                self._cond.notify_all()


ORDER = Order()
