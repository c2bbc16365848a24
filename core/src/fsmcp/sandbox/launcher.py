"""The server's side of the running launcher: one ``launch.py --serve`` process per server,
which forks a launcher for each confined program (:func:`launch.serve`), and the program as a
process the caller of :func:`fsmcp.start_program` owns (:class:`Launched`).

A fresh interpreter per program cost its start and its ``ctypes`` (some 45 ms of every
program); a fork of one already running costs a fraction of a millisecond. The running one is
started at the first confined program, from the server, as the interpreter was; it is started
again when it has died, and ends with the server: the server's end of its socket closes, and
the kernel kills it when the server ends (``PR_SET_PDEATHSIG``) even killed.
"""

from __future__ import annotations

import array
import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

import anyio
import anyio.abc
import anyio.lowlevel

from . import masks
from .launch import ERRNO, NO_LINKS

CHUNK = 65536


class _Server:
    """The running launcher of this process, started at the first need."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None

    def send(self, fds: Sequence[int]) -> None:
        """Hand one request's descriptors to the running launcher, started (again) if need be."""
        with self._lock:
            for attempt in (1, 2):
                if self._channel is None or self._process is None or self._process.poll() is not None:
                    self._start()
                assert self._channel is not None
                try:
                    self._channel.sendmsg([b"r"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
                    return
                except (BrokenPipeError, ConnectionResetError, ConnectionRefusedError):
                    self._stop()  # it died since: once more with a new one
                    if attempt == 2:
                        raise

    def _start(self) -> None:
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # Its own session: a terminal's ^C is the server's to take, not its launcher's.
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", masks.LAUNCHER, "--serve", str(theirs.fileno()), str(os.getpid())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._channel = ours

    def _stop(self) -> None:
        """Close the channel (the launcher ends at its end) and reap the launcher."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._process is not None:
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None

    def stop(self) -> None:
        """Stop the running launcher (also when it took a request and ended before forking: the next starts anew)."""
        with self._lock:
            self._stop()

    def forget(self) -> None:
        """In a forked child: the parent's launcher is not this process's (nor its socket)."""
        self._lock = threading.Lock()
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self._process = None

    @property
    def pid(self) -> int | None:
        """The running launcher's process id, if one runs."""
        with self._lock:
            return self._process.pid if self._process is not None and self._process.poll() is None else None


SERVER = _Server()
atexit.register(SERVER.stop)
os.register_at_fork(after_in_child=SERVER.forget)


async def launch(
    program: str,
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    ruleset: int,
    listing: int | None,
    status: int,
    stdin: int | IO[Any] | None,
    stdout: int | IO[Any] | None,
    stderr: int | IO[Any] | None,
) -> Launched:
    """Start ``program`` (``argv``) through the running launcher, as ``launch.py RULESET MASKS
    STATUS PROGRAM ARGS`` would: the masks ``listing`` (or none: ``no-links``), the ``status``
    pipe's end to write (closed by the exec). The descriptors given stay the caller's to close.
    Returns once the launcher leads the program's session (it is its process id)."""
    fields = [program, cwd, NO_LINKS if listing is None else "listing", str(len(argv)), *argv]
    fields += [f"{name}={value}" for name, value in env.items()]
    if any("\0" in each for each in fields) or any("=" in name for name in env):
        raise ValueError("embedded null byte, or = in an environment variable's name")
    request = masks.listing(fields)
    opened: list[int] = [request]
    ours: dict[int, int] = {}
    try:
        ends = []
        for n, spec in enumerate((stdin, stdout, stderr)):
            if spec == subprocess.PIPE:
                read, write = os.pipe()
                mine, theirs = (write, read) if n == 0 else (read, write)
                os.set_blocking(mine, False)
                ours[n] = mine
                opened.append(theirs)
                ends.append(theirs)
            elif spec == subprocess.DEVNULL:
                null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
                opened.append(null)
                ends.append(null)
            elif spec == subprocess.STDOUT and n == 2:
                ends.append(ends[1])
            elif spec is None:
                ends.append(n)
            else:
                ends.append(spec if isinstance(spec, int) else spec.fileno())
        fds = [request, ruleset, status, -1, *ends, *([] if listing is None else [listing])]
        for attempt in (1, 2):
            for fd in (request, *([] if listing is None else [listing])):
                os.lseek(fd, 0, os.SEEK_SET)
            report, fds[3] = os.pipe()
            try:
                SERVER.send(fds)
            except BaseException:
                os.close(report)
                raise
            finally:
                os.close(fds[3])  # only the launcher holds it now: the pipe ends with it
            try:
                with anyio.CancelScope(shield=True):  # the id comes at once; without it nothing could be killed
                    head = await _read(report, 4)
                    if len(head) == 4 and (pid := int.from_bytes(head, "little")) == 0:
                        errno = int.from_bytes(await _read(report, 4), "little")
                        raise OSError(errno, os.strerror(errno))
            except BaseException:
                os.close(report)
                raise
            if len(head) == 4:
                break
            # The launcher ended between the request and the fork: nothing was started.
            os.close(report)
            SERVER.stop()
        else:
            raise OSError(0, "the launcher ended twice before it started the program")
    except BaseException:
        for fd in ours.values():
            os.close(fd)
        raise
    finally:
        for fd in opened:
            os.close(fd)
    try:  # its end, seen by the server: the end of its mount namespace and the overlays in it
        ended = os.pidfd_open(pid)
    except ProcessLookupError:
        ended = None  # ended already
    return Launched(pid, report, ours.get(0), ours.get(1), ours.get(2), ended)


def errno_of(why: str) -> int | None:
    """The ``errno`` a forked launcher wrote to the status pipe for a working directory it could not enter."""
    return int(why[len(ERRNO) :]) if why.startswith(ERRNO) else None


async def _read(fd: int, size: int) -> bytes:
    """``size`` bytes of the pipe ``fd``, or fewer at its end."""
    data = b""
    while len(data) < size:
        await anyio.wait_readable(fd)
        chunk = os.read(fd, size - len(data))
        if not chunk:
            break
        data += chunk
    return data


class _Pipe:
    """The server's end of one of the program's pipes, non-blocking."""

    def __init__(self, fd: int):
        self._fd = fd

    async def aclose(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            anyio.notify_closing(fd)
            os.close(fd)


class _Receive(_Pipe, anyio.abc.ByteReceiveStream):
    """The end of a pipe the program writes to."""

    async def receive(self, max_bytes: int = CHUNK) -> bytes:
        while True:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            await anyio.lowlevel.checkpoint()  # a program that writes without pause starves no one
            return data


class _Send(_Pipe, anyio.abc.ByteSendStream):
    """The end of the pipe the program reads."""

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
            except BrokenPipeError:
                raise anyio.BrokenResourceError from None
        await anyio.lowlevel.checkpoint()


class Launched(anyio.abc.Process):
    """A program started through the running launcher: ``pid`` is its launcher's, which leads
    the program's session (kill the group to end the program and all it started), and ends as
    the program ends; the exit status comes over the report pipe, as the launcher wrote it, and
    :meth:`wait` returns once the launcher has ended (with it the program's namespaces). A
    launcher killed before it could write it (the caller's ``SIGKILL`` to the group, the
    kernel's out-of-memory killer) reads as killed by ``SIGKILL``."""

    def __init__(self, pid: int, report: int, stdin: int | None, stdout: int | None, stderr: int | None, ended: int | None = None):
        self._pid = pid
        self._report = report
        self._ended = ended
        self._status: bytes | None = None
        self._returncode: int | None = None
        self._waiting = anyio.Lock()
        self._stdin = _Send(stdin) if stdin is not None else None
        self._stdout = _Receive(stdout) if stdout is not None else None
        self._stderr = _Receive(stderr) if stderr is not None else None

    async def wait(self) -> int:
        async with self._waiting:
            if self._returncode is None:
                if self._status is None:
                    self._status = await _read(self._report, 4)
                    os.close(self._report)
                status = self._status
                if self._ended is not None:
                    # Its report can come before its end: a view is the server's to read only once
                    # the launcher, which holds the program's mount namespace, has ended.
                    await anyio.wait_readable(self._ended)
                    os.close(self._ended)
                    self._ended = None
                self._returncode = os.waitstatus_to_exitcode(int.from_bytes(status, "little")) if len(status) == 4 else -signal.SIGKILL
        return self._returncode

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, signal: int) -> None:
        if self._returncode is None:
            try:
                os.kill(self._pid, signal)
            except ProcessLookupError:
                pass

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True) as scope:
            for stream in (self._stdin, self._stdout, self._stderr):
                if stream is not None:
                    await stream.aclose()
            scope.shield = False
            try:
                await self.wait()
            except BaseException:
                scope.shield = True
                try:
                    os.killpg(self._pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                await self.wait()
                raise

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stderr
