"""``fsmcp serve --transport http --workers N``: one port served by N worker processes.

The supervisor binds the port (and a private unix socket per worker, for the requests of a
session that another worker holds: :mod:`fsmcp.serve.forward`), reads the token, and forks the
workers; each loads the host and serves both sockets. It imports little (no uvicorn, no SDK, no
plugin): the workers do, after the fork, so none inherits another's threads or state.

A worker that ends is replaced under the same index (its sockets stay bound meanwhile, the
requests wait in their backlog); the sessions it held are gone, and a request for one is
answered 404 as for any unknown session, so its client opens a new one. SIGTERM and SIGINT are
passed to every worker, which finishes its calls in flight as a single process does; the
supervisor ends once they have.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from collections.abc import Callable

from ..api.config import Settings
from .listen import HttpSetupError, Listener, listen, read_token

Worker = Callable[[Settings, str, Listener, socket.socket, "Place", "int | None", int], int]
"""A worker's life (the CLI's: the host loaded, both sockets served): its exit status,
:data:`CONFIGURATION` for a configuration it cannot serve (said on stderr). When ``ready`` is
given, it writes the start-up line there once it serves."""

log = logging.getLogger("fsmcp")

CONFIGURATION = 2
"""A worker's exit status for a configuration it cannot serve (it printed what to change)."""
QUICK_DEATH = 1.0
"""Seconds: a worker that ends sooner after its start is replaced only after as long again."""
STOP_WAIT = 30.0
"""Seconds the workers have to end after SIGTERM (their calls have 5) before they are killed."""
_SIGNALS = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT}
_SOCKET_PATH_MAX = 100
"""Under ``sun_path``'s 108 bytes, with room for the socket's own name."""


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def workers_for(settings: Settings) -> int:
    return settings.workers if settings.workers is not None else default_workers()


@dataclass(frozen=True)
class Place:
    """A worker's place among its siblings: its index, how many there are, where their sockets are."""

    index: int
    count: int
    directory: str

    def socket_path(self, index: int) -> str:
        return os.path.join(self.directory, f"{index}.sock")


def runtime_dir() -> Path:
    """Where a supervisor makes its private directory of worker sockets: ``$XDG_RUNTIME_DIR/fsmcp``
    (the XDG place for sockets), else ``$XDG_STATE_HOME/fsmcp/run``; made 0700 and checked to be
    this user's alone (anyone who could write it could plant a socket that hears a session's
    requests, token included)."""
    from ..paths.state import private_dir, state_home

    base = os.environ.get("XDG_RUNTIME_DIR", "")
    place = Path(base) / "fsmcp" if os.path.isabs(base) else state_home() / "fsmcp" / "run"
    private_dir(Path(os.path.realpath(place)), "the worker sockets' directory", "set XDG_RUNTIME_DIR (or XDG_STATE_HOME) to a directory of this user's alone", "hear the requests a worker passes to another", "the sockets")
    return Path(os.path.realpath(place))


def _sockets_dir() -> str:
    try:
        base = str(runtime_dir())
    except (ValueError, OSError) as exc:
        raise HttpSetupError(str(exc)) from None
    if len(os.fsencode(base)) > _SOCKET_PATH_MAX - 40:
        base = tempfile.gettempdir()  # a unix socket's path has at most 107 bytes; mkdtemp makes it 0700
    return tempfile.mkdtemp(prefix=f"fsmcp-workers-{os.getpid()}-", dir=base)


class Supervisor:
    def __init__(self, settings: Settings, token: str, listener: Listener, count: int, worker: Worker, say: Callable[[str], None]):
        self.worker = worker
        self.say = say
        self.settings = settings
        self.token = token
        self.listener = listener
        self.count = count
        self.directory = _sockets_dir()
        self.private: list[socket.socket] = []
        for index in range(count):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(os.path.join(self.directory, f"{index}.sock"))
            sock.listen(128)
            self.private.append(sock)
        # The workers see this pipe's end at EOF when the supervisor is gone (even by SIGKILL): they stop then.
        self._life_read, self._life_write = os.pipe()
        self.pids: dict[int, int] = {}
        """A live worker's pid: its index."""
        self.started: dict[int, float] = {}
        self.due: dict[int, float] = {}
        """A worker to replace: when."""

    def spawn(self, index: int, ready: int | None = None) -> int:
        pid = os.fork()
        if pid == 0:  # the worker: it never returns
            code = 1
            # The forking process's exit handlers are not the worker's; its own (the journal's) run at its end.
            atexit._clear()
            try:
                os.close(self._life_write)
                os.setpgid(0, 0)  # the terminal's Ctrl-C reaches the supervisor alone, which passes it on once
                for signum in _SIGNALS:
                    signal.signal(signum, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
                for other, sock in enumerate(self.private):
                    if other != index:
                        sock.close()
                code = self.worker(self.settings, self.token, self.listener, self.private[index], Place(index, self.count, self.directory), ready, self._life_read)
            except BaseException:
                log.exception("worker %d failed", index)
            finally:
                atexit._run_exitfuncs()
                logging.shutdown()
                os._exit(code)
        self.pids[pid] = index
        self.started[index] = time.monotonic()
        return pid

    def run(self) -> int:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # not SIG_IGN (inherited), which would reap the workers unseen
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            return self._run()
        finally:
            for pid in list(self.pids):
                _kill(pid, signal.SIGKILL)
            shutil.rmtree(self.directory, ignore_errors=True)

    def _run(self) -> int:
        # The first worker alone, until it serves: a configuration it cannot serve is said once, and exits 2.
        read, write = os.pipe()
        first = self.spawn(0, write)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            line = pipe.read().decode("utf-8", "replace")
        if not line:
            _, status = os.waitpid(first, 0)
            self.pids.pop(first, None)
            return CONFIGURATION if os.waitstatus_to_exitcode(status) == CONFIGURATION else 1
        for index in range(1, self.count):
            self.spawn(index)
        self.say(f"{line}; {self.count} worker processes")
        while True:
            timeout = max(0.0, min(self.due.values()) - time.monotonic()) if self.due else None
            info = signal.sigtimedwait(_SIGNALS, timeout) if timeout is not None else signal.sigwaitinfo(_SIGNALS)
            if info is not None and info.si_signo in (signal.SIGTERM, signal.SIGINT):
                return self._stop(info.si_signo)
            self._reap()
            now = time.monotonic()
            for index, when in list(self.due.items()):
                if when <= now:
                    del self.due[index]
                    self.spawn(index)

    def _reap(self) -> None:
        while self.pids:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            index = self.pids.pop(pid, None)
            if index is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            quick = time.monotonic() - self.started[index] < QUICK_DEATH
            log.warning(
                "worker %d (pid %d) %s; its sessions are gone (their clients get 404 and open new ones); starting another%s",
                index, pid, how, f" in {QUICK_DEATH:g} s" if quick else "",
            )
            self.due[index] = time.monotonic() + (QUICK_DEATH if quick else 0.0)

    def _stop(self, signum: int) -> int:
        for pid in self.pids:
            _kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT
        while self.pids:
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning("workers %s did not end %g s after SIGTERM; killing them", sorted(self.pids.values()), STOP_WAIT)
                return 1
            info = signal.sigtimedwait(_SIGNALS, min(left, 0.5))
            if info is not None and info.si_signo in (signal.SIGTERM, signal.SIGINT):
                for pid in self.pids:  # asked again: the workers stop now, as a single process does
                    _kill(pid, signal.SIGTERM)
            self._reap_stopping()
        return 0

    def _reap_stopping(self) -> None:
        while self.pids:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.pids.clear()
                return
            if pid == 0:
                return
            self.pids.pop(pid, None)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def supervise(settings: Settings, count: int, worker: Worker, say: Callable[[str], None], error: Callable[[object], None]) -> int:
    """Serve HTTP from ``count`` worker processes; the exit status, 2 for a configuration to fix."""
    try:
        token = read_token(settings)
        _request_states_kept()
        listener = listen(settings)
        supervisor = Supervisor(settings, token, listener, count, worker, say)
    except HttpSetupError as exc:
        error(exc)
        return CONFIGURATION
    if not listener.loopback:
        log.warning(
            "listening on %s, which other machines can reach; requests still need the token, but plain HTTP "
            "carries it in the clear: put a TLS reverse proxy in front (docs/http.md)",
            listener.address,
        )
    return supervisor.run()


def _request_states_kept() -> None:
    """Make or read the 2026-07-28 request states' key before any worker starts: a state directory
    open to other users stops the start (exit 2), and the workers all find one key."""
    from .request_state import RequestStates

    try:
        RequestStates()
    except (ValueError, OSError) as exc:
        raise HttpSetupError(f"cannot keep the 2026-07-28 request states: {exc}") from None
