"""Helpers for testing fsmcp plugins, ours and third parties' alike.

``host_for`` builds a host with exactly the plugins you name (no entry points), and
``connect`` drives it through the ``mcp`` SDK's own client in process, over the same protocol
code that ``fsmcp serve`` runs; ``serve_stdio`` starts the real ``fsmcp serve`` as a
subprocess and connects over stdio.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.message import SessionMessage

from .config import build_settings
from .host import Host
from .stdio import serve_wire
from .wire import Wire


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
    **client_options: Any,
) -> AsyncIterator[Client]:
    """The real ``python -m fsmcp serve <serve_args>`` over stdio, with the SDK's client (``mode`` as for ``connect``).

    ``under``: a script the interpreter runs instead, which sets the process up and then runs
    ``python ARGS...`` (a filter that makes a system call fail as an older kernel's would).
    """
    params = StdioServerParameters(
        command=sys.executable,
        args=[*([str(under)] if under else []), "-m", "fsmcp", "serve", *serve_args],
        cwd=str(cwd) if cwd else None,
        env={**os.environ, **(env or {})},
    )
    async with Client(params, mode=mode, **client_options) as client:
        yield client


def http_url(process: subprocess.Popen[bytes], errors: Path) -> str:
    """The address ``fsmcp serve --transport http`` (``process``, its stderr in ``errors``) listens at.

    Printed once the socket listens: a request sent from then on waits for the app, never fails.
    """
    for _ in range(600):  # bounded by count: 30 s at most, however slow the machine
        found = re.search(r"over HTTP at (http://\S+)", errors.read_text())
        if found:
            return found.group(1)
        assert process.poll() is None, f"the server exited: {errors.read_text()}"
        time.sleep(0.05)
    raise AssertionError(f"the server did not start: {errors.read_text()}")


class ToolCalls:
    """A connected client with assertions: ``ok`` and ``fail`` check the outcome, return the text.

    ``texts`` keeps every text received, so a test can check that something (a secret's
    content, an outside path) never appeared in any of them.
    """

    def __init__(self, client: Client):
        self.client = client
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
    ``("dir", mode)`` and a symbolic link ``("link", target)``, never followed. Modes are
    permission bits (``0o644``).
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
            else:
                seen[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
    return seen
