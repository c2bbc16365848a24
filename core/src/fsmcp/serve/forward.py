"""A request for a session another worker holds, passed to that worker over its private socket.

Each worker names the sessions it opens with its index (``3-<the SDK's id>``): a request whose
``Mcp-Session-Id`` names another worker is streamed to that worker's unix socket as it came
(its token and ``Host`` checked there again), and the answer streamed back as it is made: a
call's event stream, and a session's ``GET`` stream for as long as the client keeps it open.
A session whose worker is gone (or replaced: the new one never opened it) is answered 404, as
the protocol says for an unknown session, and its client opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING

import h11

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send

log = logging.getLogger("fsmcp")

SESSION_HEADER = b"mcp-session-id"
_HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"proxy-connection", b"content-length"}
_OWN_HEADERS = {b"date", b"server"}
"""What uvicorn adds to every response itself: not copied from the other worker's."""
_READ = 64 * 1024


def session_worker(scope: Scope, count: int) -> tuple[int, int, bytes] | None:
    """The worker a request's session names: (worker, index of the header, the SDK's own id), or None."""
    for at, (name, value) in enumerate(scope["headers"]):
        if name == SESSION_HEADER:
            prefix, dash, rest = value.partition(b"-")
            if dash and prefix.isdigit() and len(prefix) <= 3 and int(prefix) < count and rest:
                return int(prefix), at, rest
            return None
    return None


def with_own_id(scope: Scope, at: int, own: bytes) -> Scope:
    """``scope`` with the session header holding the SDK's own id (the worker's prefix off)."""
    headers = list(scope["headers"])
    headers[at] = (SESSION_HEADER, own)
    return {**scope, "headers": headers}


def naming(send: Send, index: int) -> Send:
    """``send`` that prefixes the session id a response hands out with this worker's index."""
    prefix = f"{index}-".encode()

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers") or []
            if any(name.lower() == SESSION_HEADER for name, _ in headers):
                message = {**message, "headers": [(n, prefix + v if n.lower() == SESSION_HEADER else v) for n, v in headers]}
        await send(message)

    return sending


async def forward(scope: Scope, receive: Receive, send: Send, path: str, body: bytes | None) -> None:
    """Pass the request to the worker listening at ``path``; its answer, streamed back."""
    try:
        reader, writer = await asyncio.open_unix_connection(path)
    except OSError:
        await _session_gone(send)
        return
    connection = h11.Connection(h11.CLIENT)
    headers = [(n, v) for n, v in scope["headers"] if n.lower() not in _HOP_BY_HOP]
    if body is not None:
        headers.append((b"content-length", str(len(body)).encode()))
    target = scope.get("raw_path") or scope["path"].encode()
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    started = False
    try:
        writer.write(connection.send(h11.Request(method=scope["method"], target=target, headers=headers)))
        if body:
            writer.write(connection.send(h11.Data(data=body)))
        writer.write(connection.send(h11.EndOfMessage()))

        async def relay() -> None:
            nonlocal started
            while True:
                event = connection.next_event()
                if event is h11.NEED_DATA:
                    connection.receive_data(await reader.read(_READ))
                elif isinstance(event, h11.Response):
                    kept = [(n, v) for n, v in event.headers if n not in _HOP_BY_HOP and n not in _OWN_HEADERS]
                    await send({"type": "http.response.start", "status": event.status_code, "headers": kept})
                    started = True
                elif isinstance(event, h11.Data):
                    await send({"type": "http.response.body", "body": bytes(event.data), "more_body": True})
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return

        async def client_gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        relaying, watching = asyncio.ensure_future(relay()), asyncio.ensure_future(client_gone())
        try:
            await asyncio.wait({relaying, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (relaying, watching):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relaying
            with contextlib.suppress(asyncio.CancelledError):
                await watching
        if relaying.done() and not relaying.cancelled():
            relaying.result()
    except (OSError, h11.ProtocolError) as exc:
        # The other worker ended mid-request: before an answer, its session is as good as unknown.
        log.warning("a request passed to the worker at %s got no whole answer (%s)", path, exc)
        if not started:
            await _session_gone(send)
        else:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        writer.close()


async def _session_gone(send: Send) -> None:
    """The SDK's answer to an unknown session, which a session of a worker that ended now is."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}).encode()
    await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
