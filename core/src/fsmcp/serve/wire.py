"""Where messages travel: a client's end of the connection, as lines of JSON."""

from __future__ import annotations

import asyncio
import codecs
import fcntl
import os
import stat
from typing import Any

import orjson

from ..api.jsontext import dumps

ENVELOPE_BYTES = 1 << 20
"""What a message carries besides a file's content, at most."""
JSON_BYTES_PER_BYTE = 6
"""What one byte of a file costs at most as JSON text: a control character is ``\\u0001`` (a
surrogate pair is 12 bytes for 4, base64 4 for 3)."""


def max_message_bytes(max_file_bytes: int) -> int:
    """The longest message (a line over stdio, a request body over HTTP): the largest file a tool
    writes, as JSON text whatever its escapes, and the request around it. Parsed, a message takes
    up to ~14 times its size in memory (an array of small numbers): no longer one is read."""
    return JSON_BYTES_PER_BYTE * max_file_bytes + ENVELOPE_BYTES


def too_long(limit: int) -> str:
    return (
        f"Parse error: a message past this server's limit of {limit:,} bytes (a file of max_file_bytes as JSON "
        "text, and the request around it) was dropped unread; write a larger file in parts (write_file, then "
        "append_file), or raise max_file_bytes in the server's configuration"
    )


READ_BYTES = 1 << 16
"""The most read from stdin at once."""

PAUSE_BYTES = 1 << 22
"""Requests waiting to be read past which stdin is no longer read until they are: a client that
writes faster than the server answers (or reads no answers) is held back by its pipe, not
absorbed by the server's memory. A longer line is still read whole, up to its limit."""


class Wire:
    """A client's end of the connection: lines in, lines out."""

    live = False
    """Whether the input comes from a client that is there (a pipe, a socket, a terminal), whose end
    of the input means it is leaving; not from a file, read to its end and answered in full."""

    limit: int | None = None
    """The longest line read whole; a longer one is read as :data:`TOO_LONG`."""

    stopped: str | None = None
    """Why no more requests are read though the client is still there (the signal that ends the
    server), or None."""

    async def hung_up(self) -> None:
        """Returns when the client can no longer read the answers (never, unless the wire can tell)."""
        await asyncio.Event().wait()

    async def read_line(self) -> bytes | None:
        """The next line, or None when the client has closed its end."""
        raise NotImplementedError

    async def write(self, data: bytes) -> None:
        """Send whole lines."""
        raise NotImplementedError

    async def send(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        await self.write(encode(message))


def encode(message: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """A message (or a batch's answers) as one line of JSON that a strict parser accepts.

    A lone surrogate (a file name's undecodable byte that reached a message unescaped) is
    neither UTF-8 nor, as ``\\udcff``, accepted by strict JSON parsers: it is written as the
    names rule writes that byte (``\\xff``), any other lone surrogate as U+FFFD.
    orjson writes the usual message in a tenth of the standard library's time; what it
    refuses (a lone surrogate, an integer past 64 bits, a key that is no string) is written by
    the standard library.
    """
    try:
        return orjson.dumps(message) + b"\n"
    except TypeError:
        return dumps(message, default=None).encode("utf-8", "fsmcp-wire") + b"\n"


def _surrogate_escaped(exc: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    # Surrogates occur only inside JSON strings, so the backslash is written as JSON escapes it.
    out = "".join(f"\\\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else "\ufffd" for c in exc.object[exc.start : exc.end])
    return out.encode(), exc.end


codecs.register_error("fsmcp-wire", _surrogate_escaped)


class PipeWire(Wire):
    """stdin and stdout.

    fd 0 and fd 1 are moved to private descriptors and pointed at the null device and at
    stderr, as the SDK's transport does, so a tool or a child process that reads stdin or
    prints to stdout can neither steal a request nor corrupt the protocol.
    """

    def __init__(self, reader: Lines | None, infile: Any, writer: asyncio.StreamWriter | None, outfile: Any):
        self._reader, self._infile = reader, infile
        self._writer, self._outfile = writer, outfile
        self.live = reader is not None
        self._unsent: list[bytes] = []
        """Lines sent during this turn of the event loop, written together at its end: with
        many calls in flight, one write (and one wake-up of the client) carries many answers."""

    async def hung_up(self) -> None:
        if self._writer is None:
            await super().hung_up()
        else:
            await self._writer.transport.get_protocol().lost.wait()  # type: ignore[attr-defined]

    @classmethod
    async def claim(cls, limit: int) -> PipeWire:
        loop = asyncio.get_running_loop()
        fd_in = _divert(0, os.open(os.devnull, os.O_RDONLY))
        fd_out = _divert(1, os.dup(2))
        # Pipes, sockets and terminals are watched by the event loop. Anything else (a file, as
        # in `fsmcp serve < requests.jsonl`, or /dev/null, which epoll refuses) is read and
        # written by a worker thread.
        reader: Lines | None = None
        if _pollable(fd_in):
            transport, reader = await loop.connect_read_pipe(lambda: Lines(limit), open(fd_in, "rb", buffering=0, closefd=False))
            # asyncio reads up to 256 KiB at a time, a buffer malloc maps and unmaps at every read
            # (three system calls for a request of a few hundred bytes); 64 KiB comes from the heap.
            transport.max_size = READ_BYTES  # type: ignore[attr-defined]
        writer: asyncio.StreamWriter | None = None
        if _pollable(fd_out):
            transport, protocol = await loop.connect_write_pipe(_Output, open(fd_out, "wb", buffering=0, closefd=False))
            writer = asyncio.StreamWriter(transport, protocol, None, loop)
        wire = cls(reader, open(fd_in, "rb", closefd=False), writer, open(fd_out, "wb", closefd=False))
        wire.limit = limit if reader is not None else None  # a file is read by lines of any length
        return wire

    async def read_line(self) -> bytes | None:
        if self._reader is None:
            import anyio

            line = await anyio.to_thread.run_sync(self._infile.readline)
            return line or None
        if self._unsent and not self._reader.has_line():
            self._flush()  # nothing more to answer before the client sends again: answer now
        return await self._reader.readline()

    async def write(self, data: bytes) -> None:
        if self._writer is None:
            import anyio

            await anyio.to_thread.run_sync(self._write_file, data)
            return
        if self._writer.transport.is_closing():
            raise ConnectionResetError("the client closed its end of the connection")
        if not self._unsent:
            asyncio.get_running_loop().call_soon(self._flush)
        self._unsent.append(data)
        await self._writer.drain()

    def _flush(self) -> None:
        lines, self._unsent = self._unsent, []
        if lines and not self._writer.transport.is_closing():  # a client gone is noticed by hung_up
            self._writer.write(lines[0] if len(lines) == 1 else b"".join(lines))

    def _write_file(self, data: bytes) -> None:
        self._outfile.write(data)
        self._outfile.flush()


TOO_LONG = b"\x00 message too long\n"
"""What :meth:`Lines.readline` gives for a line past the limit (a parse error to the client)."""


class Lines(asyncio.Protocol):
    """stdin's protocol: what the client sent, cut into lines.

    In place of asyncio's StreamReader, whose ``readline`` is three coroutines deep, and whose
    buffer cannot say whether a whole line is waiting (:meth:`has_line`: whether answers may
    wait for the next request's). A line longer than ``limit`` is dropped to its end and read
    as :data:`TOO_LONG`. Past ``pause_bytes`` waiting, reading pauses until no whole line is
    left to read.
    """

    def __init__(self, limit: int, pause_bytes: int = PAUSE_BYTES):
        self._limit = limit
        self._pause_bytes = pause_bytes
        self._buffer = bytearray()
        self._scanned = 0
        """Bytes at the buffer's start known to hold no newline: a long line is searched once, not
        again from its start at every read."""
        self._dropping = False
        self._eof = False
        self._arrived = asyncio.Event()
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._dropping:
            end = data.find(b"\n")
            if end < 0:
                return
            self._dropping, data = False, data[end + 1 :]
        self._buffer += data
        if len(self._buffer) > self._pause_bytes and self._transport is not None and not self._paused:
            self._transport.pause_reading()
            self._paused = True
        self._arrived.set()

    def eof_received(self) -> None:
        self._eof = True
        self._arrived.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._arrived.set()

    def has_line(self) -> bool:
        return self._buffer.find(b"\n", self._scanned) >= 0

    async def readline(self) -> bytes | None:
        """The next line with its newline (the last may lack it), or None at the end."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end > self._limit or (end < 0 and len(self._buffer) > self._limit):
                self._dropping = end < 0
                del self._buffer[: end + 1 if end >= 0 else len(self._buffer)]
                self._scanned = 0
                return TOO_LONG
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            if self._eof:
                rest = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return rest or None
            if self._paused:
                self._paused = False
                self._transport.resume_reading()  # type: ignore[union-attr]
            self._arrived.clear()
            await self._arrived.wait()


class _Output(asyncio.streams.FlowControlMixin):
    """stdout's protocol: it knows when the client closed its end (asyncio watches a pipe for that)."""

    def __init__(self) -> None:
        super().__init__()
        self.lost = asyncio.Event()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost.set()


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _divert(fd: int, diversion: int) -> int:
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private
