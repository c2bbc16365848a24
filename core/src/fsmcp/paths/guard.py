"""One file, one change at a time, and no change over a file this session has not seen.

Two concerns that must agree on what "the file as it is" means, so they live together:

* **Locks.** A call that changes files holds a lock on every file it reads or writes, keyed by
  the file's real path, until it ends. Two changes to one file, from any tools and sessions,
  are therefore one after the other: the second reads what the first wrote. Between server
  processes of one user too (:mod:`fsmcp.paths.locks`): each lock is also an OFD lock on one byte of
  one shared lock file.
* **The stale-write guard.** A session (one client connection) remembers the :func:`version` of
  each file it read with a read-only tool, or changed itself. A write or append over a file
  whose version has moved since, by someone else, is refused with ``EDIT_CONFLICT``; reading
  the file again lifts it. ``stale_guard = false`` turns the guard off, never the locks.

A version is a hash of ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``, not of the
content, which would cost a whole read for every ``get_file_info`` and every write; why it
moves with every change: docs/tools/read.md (``version``).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ..api.errors import ErrorCode, OffLoop, ToolError
from .locks import FileLocks
from .roots import Access

if TYPE_CHECKING:
    from .fs import FileSystem

ExpectedVersion = Annotated[
    str | SkipJsonSchema[None],
    Field(json_schema_extra=lambda schema: schema.pop("default", None)),
]
"""The ``expectedVersion`` parameter of every mutating tool, declared once for all of them; it is
described once, where it comes from (get_file_info's description), not in every tool."""

DEADLOCK_WAIT = 30.0
"""Seconds a call that already holds a lock waits for another before giving up (two calls
taking the same files in opposite orders would otherwise wait for each other for ever)."""


def version(st: os.stat_result) -> str:
    """The version of a file as ``get_file_info`` reports it (see the module's docstring)."""
    return _digest(_identity(st))


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What a version is a hash of."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _digest(identity: tuple[int, int, int, int, int]) -> str:
    return hashlib.blake2b("{}:{}:{}:{}:{}".format(*identity).encode(), digest_size=8).hexdigest()


def changed_at(st: os.stat_result) -> str:
    return datetime.fromtimestamp(st.st_ctime, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class Session:
    """One client connection (a stdio connection, an HTTP session): the version of each file it has read or changed.

    ``id`` names it in the audit log and in the change journal, where it tells this session's
    changes from those of other sessions and other servers sharing the journal: random, so
    distinct between processes too, and never chosen by the client.
    """

    def __init__(self) -> None:
        self.id = os.urandom(8).hex()
        self._seen: dict[str, tuple[int, int, int, int, int]] = {}
        """What each file's version was made of: hashed only when a write asks (every read records one)."""
        self._lock = threading.Lock()

    def saw(self, path: Path, st: os.stat_result) -> None:
        with self._lock:
            self._seen[str(path)] = _identity(st)

    def seen(self, path: Path) -> str | None:
        with self._lock:
            identity = self._seen.get(str(path))
        return None if identity is None else _digest(identity)

    def forget(self, path: Path) -> None:
        """Forget ``path`` and everything under it (moved, copied over or deleted by this session)."""
        key, below = str(path), str(path).rstrip("/") + "/"
        with self._lock:
            for seen in [s for s in self._seen if s == key or s.startswith(below)]:
                del self._seen[seen]


# Calls outside any client connection (fsmcp call, a test's direct call): one session per process.
_session: ContextVar[Session] = ContextVar("fsmcp_session", default=Session())


def current_session() -> Session:
    return _session.get()


class in_session:  # noqa: N801 (used as a function: with in_session(s) as client)
    """Run the ``with`` block as ``session`` (the transports enter one per client connection); None: the current one."""

    __slots__ = ("session", "token")

    def __init__(self, session: Session | None):
        self.session = session

    def __enter__(self) -> Session:
        if self.session is None:
            self.token = None
            return _session.get()
        self.token = _session.set(self.session)
        return self.session

    def __exit__(self, *exc: object) -> None:
        if self.token is not None:
            _session.reset(self.token)


class _Call:
    def __init__(self, changes: bool, work: Any = None):
        self.changes = changes
        self.work = work
        """The tool call (its :class:`fsmcp.ToolContext`): a wait for a lock ends when it is cancelled,
        and a quick one on the event loop waits in a worker thread instead; None outside a call."""
        self.held: set[str] = set()


_call: ContextVar[_Call | None] = ContextVar("fsmcp_guard_call", default=None)


class _CallScope:
    # A class, not a generator: every call enters one.
    __slots__ = ("guard", "me", "token")

    def __init__(self, guard: Guard, me: _Call):
        self.guard, self.me = guard, me

    def __enter__(self) -> None:
        self.token = _call.set(self.me)

    def __exit__(self, *exc: object) -> None:
        _call.reset(self.token)
        self.guard._release(self.me)


class Guard:
    """The host's locks and stale-write checks (see the module's docstring)."""

    def __init__(self, *, stale_guard: bool = True, files: FileLocks | None = None):
        self.stale_guard = stale_guard
        self._files = files
        """The locks between processes; None: within this process only."""
        self._cond = threading.Condition()
        self._owner: dict[str, _Call] = {}

    def call(self, changes: bool, work: Any = None) -> _CallScope:
        """One tool call (``work``, its context), as a ``with`` block; ``changes`` when it may change files. Its locks end with it."""
        return _CallScope(self, _Call(changes, work))

    # -- locks --------------------------------------------------------------------------------

    def _hold(self, key: str, me: _Call) -> None:
        if key in me.held:
            return
        deadline = time.monotonic() + DEADLOCK_WAIT
        with self._cond:
            while self._owner.get(key) is not None:
                _wait_or_give_up(key, me, deadline)
                self._cond.wait(0.5)
            self._owner[key] = me
        try:
            if self._files is not None:
                self._hold_between_processes(key, me, deadline)
        except BaseException:
            with self._cond:
                del self._owner[key]
                self._cond.notify_all()
            raise
        me.held.add(key)

    def _hold_between_processes(self, key: str, me: _Call, deadline: float) -> None:
        # Polled, not F_OFD_SETLKW: a wait in the kernel could not be cancelled nor given up
        # on (the kernel finds no deadlock between OFD locks). Uncontended, one system call.
        assert self._files is not None
        pause = 0.0005
        while not self._files.try_lock(key):
            if me.work is not None and me.work.on_loop:
                raise OffLoop  # a quick call on the event loop waits in a worker thread instead
            _wait_or_give_up(key, me, deadline)
            time.sleep(pause)
            pause = min(pause * 2, 0.02)

    def _release(self, me: _Call) -> None:
        if not me.held:
            return
        with self._cond:
            for key in me.held:
                # The other processes' lock first: once this process's owner is gone, another
                # call of it may take the key, and its OFD lock is this one (the same open file).
                if self._files is not None:
                    self._files.unlock(key)
                if self._owner.get(key) is me:
                    del self._owner[key]
            me.held.clear()
            self._cond.notify_all()

    @contextmanager
    def changing(self, *paths: Path) -> Iterator[None]:
        """Hold the paths' locks: until the call ends, or to the end of this block outside a call."""
        me = _call.get()
        alone = me is None
        if alone:
            me = _Call(True)
        try:
            for key in sorted({str(p) for p in paths}):
                self._hold(key, me)
            yield
        finally:
            if alone:
                self._release(me)

    def hold(self, path: Path) -> None:
        """In a call that changes files, hold ``path``'s lock from now until the call ends.

        The host calls it before a file is opened to read; a tool calls it before it looks at a
        file it will change (its size, its times), so that what it saw is what it changes.
        """
        me = _call.get()
        if me is not None and me.changes:
            self._hold(str(path), me)

    # -- the stale-write guard ----------------------------------------------------------------

    def opened(self, path: Path, st: os.stat_result) -> None:
        """A file was opened to read; a read-only call has now seen this version of it."""
        me = _call.get()
        if self.stale_guard and (me is None or not me.changes):
            current_session().saw(path, st)

    def check(self, path: Path, st: os.stat_result | None) -> None:
        """Before ``path`` (now ``st``, None when missing) is written: refuse over a change unseen."""
        if not self.stale_guard or st is None:
            return  # nothing there: no one's change can be lost
        seen = current_session().seen(path)
        if seen is not None and seen != version(st):
            raise ToolError(
                ErrorCode.EDIT_CONFLICT,
                f"{path} changed on disk at {changed_at(st)}, after this session last read or changed it; nothing was written. "
                "Read it again (read_file), then make the change on what it holds now",
                {"version": version(st)},
            )

    def knows(self, path: Path, st: os.stat_result) -> None:
        """This session knows ``path`` as ``st``: it changed it, or named its version."""
        if self.stale_guard:
            current_session().saw(path, st)

    def moved(self, *paths: Path) -> None:
        """This session moved, copied over or deleted these paths: what it saw there is gone."""
        session = current_session()
        for path in paths:
            session.forget(path)



def _wait_or_give_up(key: str, me: _Call, deadline: float) -> None:
    """Between two tries for ``key``'s lock: give up when the call was cancelled, or when it holds
    another file and has waited long enough that the two calls may be waiting for each other."""
    if me.held and time.monotonic() > deadline:
        raise ToolError(
            ErrorCode.EDIT_CONFLICT,
            f"{key} is being changed by another call that waits for a file this one holds; nothing more was changed. Try again",
        )
    if me.work is not None:
        me.work.check_cancelled()


def expect_version(fs: FileSystem, raw: str, expected: str) -> None:
    """``expectedVersion``: refuse unless the file at ``raw`` is at version ``expected``.

    Checked under the file's lock, which a call that changes files then keeps: nothing else
    changes the file through this server before the call does.
    """
    path = fs.resolve(raw, Access.WRITE)
    with fs.guard.changing(path.path):
        try:
            st: os.stat_result | None = fs.stat(path)
        except ToolError as exc:
            if exc.code is not ErrorCode.NOT_FOUND:
                raise
            st = None
    if st is None:
        raise ToolError(ErrorCode.EDIT_CONFLICT, f"{path} does not exist, so it is not at version {expected}; nothing was changed")
    if version(st) != expected:
        raise ToolError(
            ErrorCode.EDIT_CONFLICT,
            f"{path} is at version {version(st)} (changed {changed_at(st)}), not the expected {expected}; nothing was changed. "
            "Read it again, then retry with its new version",
            {"version": version(st)},
        )
    fs.guard.knows(path.path, st)

