"""Helpers for testing fsmcp plugins, ours and third parties' alike, and the pytest plugin that
offers them as fixtures.

``host_for`` builds a host with exactly the plugins you name (no entry points), and
``connect`` drives it through the ``mcp`` SDK's own client in process, over the same protocol
code that ``fsmcp serve`` runs; ``serve_stdio`` starts the real ``fsmcp serve`` as a
subprocess and connects over stdio.

Installed with fsmcp, this module is a pytest plugin (entry point ``fsmcp`` in group
``pytest11``; ``-p no:fsmcp`` turns it off): the fixtures ``root``, ``outside``, ``secret``,
``server`` and ``call``, with ``fsmcp_plugins`` for a conftest to say which plugins they load,
and every test's server state (the change journal) in a directory of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.shared.message import SessionMessage

from .api.config import build_settings
from .run.host import Host
from .serve.stdio import serve_wire
from .serve.wire import Wire


def host_for(roots: Iterable[str | Path], load: Iterable[tuple[str, object]] = (), *, entry_points: bool = False, **settings: Any) -> Host:
    """A host over ``roots`` loading the ``(name, module)`` plugins in ``load``, with settings.

    Any setting may be given by keyword, plugin options too:
    ``host_for([root], [("wordcount", hooks)], plugins={"wordcount": {"some_option": 1}})``.
    """
    values = {"roots": [str(r) for r in roots], **settings}
    return Host.start(build_settings({}, values), extra_plugins=load, entry_points=entry_points)


@asynccontextmanager
async def connect(host: Host, *, mode: str = "legacy", **client_options: Any) -> AsyncIterator[Client]:
    """The SDK's ``Client`` connected to ``host`` in process (no subprocess, no port).

    ``mode="legacy"`` (the default) opens with ``initialize``, as desktop clients do;
    ``mode="auto"`` opens in the 2026-07-28 era.
    Messages travel as JSON lines, exactly as over stdio.
    """
    async with Client(_InProcess(host), mode=mode, **client_options) as client:
        yield client


class _MemoryWire(Wire):
    def __init__(self, lines: anyio.abc.ObjectReceiveStream[bytes], to_client: anyio.abc.ObjectSendStream[SessionMessage | Exception]):
        self._lines = lines
        self._to_client = to_client

    async def read_line(self) -> bytes | None:
        try:
            return await self._lines.receive()
        except anyio.EndOfStream:
            return None

    async def write(self, data: bytes) -> None:
        for line in data.splitlines():
            await self._to_client.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))


class _InProcess:
    """A client transport (an async context manager of two streams) to ``serve_wire`` in process."""

    def __init__(self, host: Host):
        self.host = host

    async def __aenter__(self) -> tuple[Any, Any]:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](100)
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](100)
        lines_in, lines = anyio.create_memory_object_stream[bytes](100)

        async def forward() -> None:
            async with from_client, lines_in:
                async for message in from_client:
                    # As a client's JSON encoder would: a lone surrogate travels escaped (\udcff).
                    line = json.dumps(message.message.model_dump(by_alias=True, exclude_unset=True, mode="json"), separators=(",", ":"))
                    await lines_in.send(line.encode() + b"\n")

        async def serve() -> None:
            async with to_client:
                await serve_wire(self.host, _MemoryWire(lines, to_client))

        self._tg.start_soon(forward)
        self._tg.start_soon(serve)
        return client_reads, client_writes

    async def __aexit__(self, *exc: Any) -> bool | None:
        self._tg.cancel_scope.cancel()
        return await self._tg.__aexit__(*exc)


@asynccontextmanager
async def serve_stdio(
    *serve_args: str,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    mode: str = "legacy",
    under: str | Path | None = None,
    fresh: bool = False,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """The real ``fsmcp serve <serve_args>`` over stdio, with the SDK's client (``mode`` as for ``connect``).

    The server is forked from a process of this test process's that has imported fsmcp and every
    installed plugin (``_fork_server``), sparing each test an interpreter's start and its imports;
    it runs ``fsmcp serve`` on the client's own pipes, with the given ``cwd`` and ``env``, in a
    session of its own, and its exit status is the client's process's. ``fresh=True`` starts it as
    ``python -m fsmcp serve`` instead: for a test about the process itself (its parent, its
    command line, its memory). ``under`` is a script that sets the process up and then runs
    ``python ARGS...`` (a filter that makes a system call fail as an older kernel's would): one
    that defines ``prepare()`` has it called in the forked server before fsmcp runs (what it sets
    up must hold for a process already started, as a seccomp filter does); another is run by the
    interpreter instead, as is an ``env`` with another ``PYTHONPATH``.
    """
    environ = {**os.environ, **(env or {})}
    if fresh or (under and not _prepares(under)) or environ.get("PYTHONPATH") != os.environ.get("PYTHONPATH"):
        args = [*([str(under)] if under else []), "-m", "fsmcp", "serve", *serve_args]
    else:
        args = forked("serve", *serve_args, under=under)[1:]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(cwd) if cwd else None, env=environ)
    async with Client(params, mode=mode, **client_options) as client:
        yield client


# -- the fork server -------------------------------------------------------------------------
# A server's start is mostly the interpreter's start and the imports (pydantic, the SDK, every
# plugin's models): about half a CPU-second, and the suite starts hundreds. One process per test
# process imports them once and forks a server for each start; a small stdlib-only program (the
# shim, ``python -I -S``: no site, no imports of its own) stands where the server's process stood
# for the client, hands the client's pipes to the fork server, passes on the signals it gets and
# ends with the server's exit status.

_SHIM = r"""
import array, json, os, signal, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
request = json.dumps({"argv": sys.argv[4:], "under": sys.argv[3], "env": dict(os.environ), "cwd": os.getcwd()}).encode()
s.sendmsg([len(request).to_bytes(4, "big") + request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)  # the server alone holds the client's pipes: its exit is their end
answers = s.makefile("rb")
pid = int(answers.readline())
if sys.argv[2]:
    with open(sys.argv[2], "w") as f:
        f.write(f"{pid}\n")
def forward(signum, frame):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(signum, forward)
how, _, number = answers.readline().decode().partition(" ")
if how == "signal":
    if int(number) != signal.SIGKILL:
        signal.signal(int(number), signal.SIG_DFL)
    os.kill(os.getpid(), int(number))
os._exit(int(number) if how == "exit" else 1)
"""

def forked(*args: str, pid_file: str | Path | None = None, under: str | Path | None = None) -> list[str]:
    """The command that runs ``fsmcp ARGS`` as a process forked from this test process's fork server.

    Run it as ``python -m fsmcp ARGS`` would be (``subprocess.Popen``, with its ``env`` and
    ``cwd``): what the process gets is the server's: its stdio, its signals (SIGKILL too: the
    fork server kills a server whose shim is gone), its exit status. The server's own pid, for
    what looks at the process itself (strace, /proc), is written to ``pid_file``. ``under`` is a
    script whose ``prepare()`` the forked process calls first (see ``serve_stdio``).
    Environment variables that act at an interpreter's start (``PYTHONPATH``, ...) are the fork
    server's: start ``python -m fsmcp`` where they must differ.
    """
    if under and not _prepares(under):
        raise ValueError(f"{under} defines no prepare(): run it as a script instead")
    return [sys.executable, "-I", "-S", "-c", _SHIM, _fork_server(), str(pid_file or ""), str(under or ""), *args]


def _prepares(script: str | Path) -> bool:
    """Whether the script ``script`` offers ``prepare()``, to be called in a forked process."""
    return re.search(r"^def prepare\(\)", Path(script).read_text(), re.MULTILINE) is not None


def _prepare(script: str) -> None:
    """In a forked server: ``script``'s ``prepare()``, as running the script by path would set the process up."""
    import importlib.util

    sys.path.insert(0, os.path.dirname(script))  # as for a script run by path: what lies beside it imports
    try:
        spec = importlib.util.spec_from_file_location("_fsmcp_under", script)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.prepare()
    finally:
        del sys.path[0]


def forked_python(code: str, *args: str, pid_file: str | Path | None = None) -> list[str]:
    """The command that runs Python ``code`` as ``python -c CODE ARGS`` would, forked from the fork
    server as :func:`forked` runs ``fsmcp``: fsmcp and every plugin are imported already (a
    process a test kills at a chosen step, which a plugin of its own makes the server take)."""
    return forked("-c", code, *args, pid_file=pid_file)


def pid_in(pid_file: Path, timeout: float = 60) -> int:
    """The server's pid a ``forked`` command wrote to ``pid_file`` (written before the server runs)."""
    for _ in range(int(timeout / 0.01)):  # by count: a loaded machine takes longer, never forever
        with contextlib.suppress(FileNotFoundError, ValueError):
            return int(pid_file.read_text())
        time.sleep(0.01)
    raise AssertionError(f"no pid in {pid_file}")


_fork_servers: dict[int, tuple[subprocess.Popen[bytes], str]] = {}
_fork_server_lock = threading.Lock()


def _fork_server() -> str:
    """The socket of this test process's fork server, started at its first use."""
    with _fork_server_lock:
        known = _fork_servers.get(os.getpid())
        if known is not None and known[0].poll() is None:
            return known[1]
        place = tempfile.mkdtemp(prefix="fsmcp-fork-")
        path = os.path.join(place, "socket")
        program = f"from fsmcp.testing import _forks, _served; _served(_forks({path!r}))"
        with open(os.path.join(place, "log"), "wb") as log:
            process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        assert process.stdout is not None
        if process.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the fork server did not start: {Path(place, 'log').read_text()}")
        _fork_servers[os.getpid()] = (process, path)
        atexit.register(_stop_fork_server, process, place)
        return path


def _stop_fork_server(process: subprocess.Popen[bytes], place: str) -> None:
    # Waited for, so that its servers' CPU time is counted with this process's (time, rusage).
    process.stdin.close()  # type: ignore[union-attr]
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    shutil.rmtree(place, ignore_errors=True)


def _preload() -> None:
    """Every module of fsmcp and of each installed plugin's package, imported (``__main__`` aside)."""
    import importlib
    import importlib.metadata
    import pkgutil

    packages = ["fsmcp", *{ep.value.split(".")[0].split(":")[0] for ep in importlib.metadata.entry_points(group="fsmcp")}]
    for name in packages:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, name + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)


def _write_schemas() -> None:
    """Every tool argument model's JSON schema, written here once (``json_schema`` keeps it) rather
    than in each server forked after: a tenth of a CPU-second a server."""
    from .api.tools import ToolInput, json_schema

    models: list[type[ToolInput]] = [ToolInput]
    while models:
        model = models.pop()
        models.extend(model.__subclasses__())
        with contextlib.suppress(Exception):  # a model pydantic cannot write fails in the server that lists it, as it would
            json_schema(model)


def _served(argv: list[str]) -> None:
    """``fsmcp ARGV`` run in a forked server, which then ends as an interpreter does, but for the
    teardown of every object: freeing a heap shared with the fork server copies its pages first
    (half a second)."""
    import atexit
    import traceback

    from .cli.commands import main

    try:
        if argv[:1] == ["-c"]:  # forked_python's: code, where fsmcp's arguments never start so
            sys.argv = argv[:1] + argv[2:]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
            code = 0
        else:
            code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # as at an interpreter's exit: its threads joined
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code or 0)


def _forks(path: str) -> list[str]:
    """The fork server's loop: in each forked server, the ``fsmcp`` arguments it is to run.

    It answers each shim with the server's pid and then its end (``exit N`` or ``signal N``); it
    ends when its test process does (its stdin closes).
    """
    import array
    import gc
    import selectors
    import signal
    import socket

    _preload()
    _write_schemas()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
    waiting: dict[int, socket.socket] = {}
    gc.freeze()  # what is imported stays shared: no collection in a server writes to its pages
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.fileobj == sys.stdin.fileno():
                os._exit(0)
            if key.data is not None:  # a shim gone before its server: kill the server, as a kill of the shim meant
                selector.unregister(key.fileobj)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(key.data, signal.SIGKILL)
                continue
            if key.fileobj == wake_r:
                os.read(wake_r, 512)
                while waiting:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                    if pid == 0:
                        break
                    shim = waiting.pop(pid, None)
                    if shim is not None:
                        with contextlib.suppress(KeyError):
                            selector.unregister(shim)
                        end = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.waitstatus_to_exitcode(status)}"
                        with shim, contextlib.suppress(OSError):  # a shim killed: nobody to tell
                            shim.sendall(end.encode() + b"\n")
                continue
            shim, _ = listener.accept()
            fds = array.array("i")
            # The pipes come with the message's first bytes: read them with recvmsg, or they are lost.
            head, ancillary, _, _ = shim.recvmsg(4, socket.CMSG_SPACE(3 * fds.itemsize), socket.MSG_WAITALL)
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            request = json.loads(shim.recv(int.from_bytes(head, "big"), socket.MSG_WAITALL))
            pid = os.fork()
            if pid == 0:
                # The server: the client's pipes as its stdio, nothing of the fork server's kept.
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                selector.close()
                for sock in (listener, shim, *waiting.values()):
                    sock.close()
                os.close(wake_r)
                os.close(wake_w)
                os.setsid()
                for number, fd in enumerate(fds):
                    os.dup2(fd, number)
                    os.close(fd)
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                sys.argv = [os.path.join(os.path.dirname(__file__), "__main__.py"), *request["argv"]]
                sys.path[0] = os.getcwd()  # as ``python -m`` has it (``-c`` put "" there): the tool-list cache's key holds sys.path
                if request["under"]:
                    _prepare(request["under"])
                return request["argv"]
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):
                shim.sendall(f"{pid}\n".encode())
            waiting[pid] = shim
            selector.register(shim, selectors.EVENT_READ, pid)  # readable only when it is gone


def http_url(process: subprocess.Popen[bytes], errors: Path) -> str:
    """The address ``fsmcp serve --transport http`` (``process``, its stderr in ``errors``) listens at.

    Printed once the socket listens: a request sent from then on waits for the app, never fails.
    """
    # Bounded by count, 120 s at most: a start takes a second on a quiet machine, and fifteen on
    # one with pytest-xdist's workers and more beside them on two cores; the wait ends at the line.
    for _ in range(2400):
        found = re.search(r"over HTTP at (http://\S+)", errors.read_text())
        if found:
            return found.group(1)
        assert process.poll() is None, f"the server exited: {errors.read_text()}"
        time.sleep(0.05)
    raise AssertionError(f"the server did not start: {errors.read_text()}")


class RawStdio:
    """``fsmcp serve ARGS`` (``forked``; or ``argv``) on pipes, spoken in raw JSON-RPC lines: a
    client that sends what no SDK would. Answers are read on a thread and matched by id; every
    wait is bounded (``timeout`` seconds) and says when the server exited instead."""

    def __init__(self, *serve_args: str, argv: list[str] | None = None, env: dict[str, str] | None = None, timeout: float = 60):
        pid_file = Path(tempfile.mkdtemp(prefix="fsmcp-raw-")) / "pid"
        self.proc = subprocess.Popen(
            argv or forked("serve", *serve_args, pid_file=pid_file),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})},
        )  # fmt: skip
        self.pid = self.proc.pid if argv else pid_in(pid_file, timeout)
        """The server's own process (``proc`` runs a shim when the server is ``forked``)."""
        shutil.rmtree(pid_file.parent)
        self.timeout = timeout
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._answers: dict[object, dict[str, Any]] = {}
        self.progressed = threading.Event()
        """Set once the server has sent a progress notification."""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            if b'"notifications/progress"' in line:
                self.progressed.set()
            self._lines.put(line)

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def request(self, id_: object, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode() + b"\n")

    def call(self, id_: object, name: str, arguments: Any, progress: bool = False) -> None:
        meta = {"_meta": {"progressToken": f"p{id_}"}} if progress else {}
        self.request(id_, "tools/call", {"name": name, "arguments": arguments, **meta})

    def answer(self, id_: object, timeout: float | None = None) -> dict[str, Any]:
        """The answer (result or error) to request ``id_``; AssertionError when none comes."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while id_ not in self._answers:
            try:
                message = json.loads(self._lines.get(timeout=0.1))
            except queue.Empty:
                if self.proc.poll() is not None and self._lines.empty():
                    raise AssertionError(f"the server exited ({self.proc.returncode}) without answering {id_!r}: {self.stderr()[-2000:]}") from None
                if time.monotonic() > deadline:
                    raise AssertionError(f"no answer to {id_!r}") from None
                continue
            if "id" in message and "method" not in message:
                self._answers[message["id"]] = message
        return self._answers.pop(id_)

    def text(self, id_: object) -> tuple[bool, str]:
        """A tool call's answer: whether it is an error, and its text."""
        result = self.answer(id_)["result"]
        return bool(result.get("isError")), "\n".join(c["text"] for c in result["content"] if c["type"] == "text")

    def initialize(self) -> None:
        self.request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})
        assert "result" in self.answer(0)
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def stderr(self) -> str:
        """What the server wrote to stderr (read to the end: call once it has exited)."""
        return self.proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]

    def close(self, timeout: float | None = None) -> tuple[int, str]:
        """Hang up (stdin closed) and wait: the exit status and what went to stderr."""
        self.proc.stdin.close()  # type: ignore[union-attr]
        return self.proc.wait(self.timeout if timeout is None else timeout), self.stderr()


async def cancel_when(client: Client, name: str, arguments: dict[str, Any], ready: Any, *, rounds: int = 2000, what: str = "the call never got ready to be cancelled") -> None:
    """Call tool ``name`` and cancel the call (as a client that gives up) once ``ready()`` is
    true, polled every 10 ms for at most ``rounds`` times (bounded by count, not time)."""
    scope = anyio.CancelScope()

    async def call() -> None:
        with scope:
            await client.call_tool(name, arguments)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        for _ in range(rounds):
            if ready():
                break
            await anyio.sleep(0.01)
        assert ready(), what
        scope.cancel()


class ToolCalls:
    """A connected client with assertions: ``ok`` and ``fail`` check the outcome, return the text.

    ``texts`` keeps every text received, so a test can check that something (a secret's
    content, an outside path) never appeared in any of them.
    """

    def __init__(self, client: Client, host: Host | None = None):
        self.client = client
        self.host = host
        """The host the client is connected to, when the one who connected it says."""
        self.texts: list[str] = []

    async def call(self, name: str, **args: Any) -> tuple[bool, str]:
        result = await self.client.call_tool(name, args)
        text = text_of(result)
        self.texts.append(text)
        return bool(result.is_error), text

    async def ok(self, name: str, **args: Any) -> str:
        is_error, text = await self.call(name, **args)
        assert not is_error, text
        return text

    async def fail(self, name: str, code: str, **args: Any) -> str:
        """The call fails with ``code``; returns the text (``CODE: message``)."""
        is_error, text = await self.call(name, **args)
        assert is_error, text
        assert text.startswith(f"{code}: "), text
        return text


def text_of(result: types.CallToolResult) -> str:
    """All text content of a result, joined by newlines."""
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def ok_text(result: types.CallToolResult) -> str:
    """The text of a result that must not be an error (asserts it)."""
    assert not result.is_error, text_of(result)
    return text_of(result)


def error_of(result: types.CallToolResult) -> tuple[str, str]:
    """``(code, message)`` of a result that must be an error (asserts it)."""
    assert result.is_error, f"expected an error, got {result.content!r}"
    code, _, message = text_of(result).partition(": ")
    return code, message


def tree_of(top: str | Path) -> dict[str, tuple]:
    """Everything under ``top``, byte for byte, for checking that a call changed nothing.

    Keys are paths relative to ``top``; a file is ``("file", bytes, mode)``, a directory
    ``("dir", mode)``, a symbolic link ``("link", target)``, never followed, and anything else
    (a pipe, socket or device) ``("other", kind, mode)``, never opened (a pipe would block), its
    kind the ``stat.S_IFMT`` bits. Modes are permission bits (``0o644``).
    """
    seen: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(top))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                seen[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                seen[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
            else:
                seen[rel] = ("other", stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return seen



def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def processes_with(marker: str) -> list[int]:
    """The processes running with ``marker`` in their command line (this one left out): what a
    program a test started left behind, found by a marker in its arguments."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes() and alive(int(entry)):
                    found.append(int(entry))
            except OSError:
                pass
    return found


# -- the pytest plugin ------------------------------------------------------------------------

SECRET = "TOP-SECRET: this text lives outside the roots"
"""The text of ``outside/secret.txt``: a test checks that it never shows in what a tool answers."""

Plugins = list[tuple[str, object]]


_session_state: list[tuple[str | None, str]] = []


def pytest_configure(config: pytest.Config) -> None:
    # A fixture wider than a test (a module's host) is set up before the test's own state
    # directory below: it gets one of the session's, never the user's ~/.local/state, whose
    # journal its host would recover and write.
    _session_state.append((os.environ.get("XDG_STATE_HOME"), tempfile.mkdtemp(prefix="fsmcp-state-")))
    os.environ["XDG_STATE_HOME"] = _session_state[-1][1]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _session_state:
        before, made = _session_state.pop()
        if before is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = before
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fsmcp_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # The server's state (the change journal) goes to a directory of this test's own, for the
    # servers a test starts as subprocesses too: no test writes to the user's ~/.local/state, and
    # tests running side by side (pytest-xdist) never share a journal.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty allowed root, ``tmp_path/"root"``, as its real path (the form results show).

    It lies inside ``tmp_path`` so that a test can put things beside it, outside the roots.
    """
    path = tmp_path / "root"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside ``root``, outside every root, holding ``secret.txt`` (the ``secret`` text)."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text(SECRET)
    return path.resolve()


@pytest.fixture
def secret() -> str:
    """The text of ``outside/secret.txt``."""
    return SECRET


@pytest.fixture
def fsmcp_plugins() -> Plugins | None:
    """The plugins ``server`` and ``call`` load, as ``(name, module)`` pairs (as for ``host_for``).

    None, the default, loads every installed plugin (entry points). Override it in a conftest to
    test a plugin alone: ``return [("wordcount", fsmcp_wordcount.hooks)]``.
    """
    return None


@pytest.fixture
def server(root: Path, fsmcp_plugins: Plugins | None) -> Callable[..., AbstractAsyncContextManager[ToolCalls]]:
    """``async with server(*roots, load=None, mode="legacy", **settings) as calls``: a new host
    and the SDK's client connected to it in process, as a ``ToolCalls`` (``calls.client``,
    ``calls.host``).

    The host serves ``roots`` (default ``root``; ``"DIR:ro"`` for a read-only root) with the
    plugins ``load`` (default ``fsmcp_plugins``) and ``settings`` by their ``fsmcp.toml`` names
    (``plugins={"NAME": {...}}`` for a plugin's options); ``mode`` is ``connect``'s.
    """

    @asynccontextmanager
    async def open_server(*roots: str | Path, load: Plugins | None = None, mode: str = "legacy", **settings: Any) -> AsyncIterator[ToolCalls]:
        plugins = fsmcp_plugins if load is None else load
        host = host_for(roots or [root], plugins or (), entry_points=plugins is None, **settings)
        async with connect(host, mode=mode) as client:
            yield ToolCalls(client, host)

    return open_server


@pytest.fixture
def call(server: Callable[..., AbstractAsyncContextManager[ToolCalls]]) -> Callable[..., Awaitable[types.CallToolResult]]:
    """``await call(tool, arguments=None, *, roots=(), progress=None, **settings)``: one call on a
    new ``server(*roots, **settings)``; returns the ``CallToolResult``.

    ``progress`` receives the call's progress notifications (``progress_callback``).
    """

    async def call_tool(name: str, arguments: dict[str, Any] | None = None, *, roots: Iterable[str | Path] = (), progress: Any = None, **settings: Any) -> types.CallToolResult:
        async with server(*(roots or ()), **settings) as calls:
            return await calls.client.call_tool(name, arguments or {}, progress_callback=progress)

    return call_tool
