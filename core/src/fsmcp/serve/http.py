"""``fsmcp serve --transport http``: streamable HTTP on uvicorn, behind a bearer token."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import hmac
import json
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Generator
from typing import TYPE_CHECKING, Any

import uvicorn
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.types import UNSUPPORTED_PROTOCOL_VERSION
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from sse_starlette.sse import AppStatus
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from .listen import PATH, HttpSetupError, Listener, listen, read_token  # noqa: F401 - where the CLI and tests find them
from . import forward
from .server import build_server
from .request_state import RequestStates
from .stdio import INVALID_REQUEST, METHOD_NOT_FOUND, MODERN_VERSIONS, PARSE_ERROR, STOP_GRACE, Connection, _enveloped
from ..api.jsontext import TOO_DEEP, too_deep
from .wire import Wire, encode, max_message_bytes

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ..run.host import Host
    from .workers import Place

log = logging.getLogger("fsmcp")

SPARE_DESCRIPTORS = 24
"""Descriptors kept free of connections for the calls' own work (files, a program's pipes, the
journal) and for accepting a connection to refuse it."""
BURST_GAP = 10.0
"""Seconds without a refusal that end a burst of them (each burst is logged once)."""
KEEP_ALIVE = 20
"""Seconds an idle client connection is kept open."""
DESCRIPTORS_PER_REQUEST = 2
"""A request's connection, and what its call opens meanwhile."""


def request_limit() -> int:
    """Requests served at once, below the descriptor limit (``ulimit -n``): past it a request is
    refused with 503 rather than a descriptor failing some call, or the accept loop."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    in_use = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 16
    return max(1, (soft - in_use - SPARE_DESCRIPTORS) // DESCRIPTORS_PER_REQUEST)


class Gate:
    """What a request must pass before the MCP app sees it, in this order.

    1. ``Authorization: Bearer <token>``, compared in constant time: else 401.
    2. ``Host`` and ``Origin`` among the accepted values (DNS rebinding): else 421 / 403.
    3. The body: at most ``max_body`` bytes (else 413), nested no deeper than the JSON reader
       can follow (else 400).
    4. The era. A POST carrying the 2026-07-28 envelope in ``params._meta`` (or an
       ``MCP-Protocol-Version: 2026-07-28`` header) is answered here, statelessly, by the
       dispatch stdio uses (:class:`Stateless`): nothing of it is kept between requests, so any
       worker or replica sharing the state directory can answer the next. Anything else goes to
       the SDK's session app (the handshake eras, ``Mcp-Session-Id``), unless its
       ``MCP-Protocol-Version`` is one no era here speaks: -32022 with the versions served.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        security: TransportSecuritySettings,
        *,
        max_body: int,
        max_requests: int,
        max_sessions: int,
        stateless: Stateless | None = None,
        place: Place | None = None,
    ):
        self.app = app
        self.stateless = stateless
        self.place = place
        """This worker among several (``--workers``): sessions are named by it, and passed to it."""
        self.max_sessions = max_sessions
        self._digest = _digest(token)
        self._security = TransportSecurityMiddleware(security)
        self.max_body = max_body
        self.max_requests = max_requests
        self._serving = 0
        self.posts = 0
        """POSTs in flight: the calls a signal lets finish (a session's GET stream never ends)."""
        self._last_refusal = -BURST_GAP
        """When a request or a connection was last refused: a burst is logged once, at its start."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._serving >= self.max_requests:
            await self._refuse_busy()(scope, receive, send)
            return
        post = scope["method"] == "POST"
        self._serving += 1
        self.posts += post
        try:
            await self._serve(scope, receive, send)
        finally:
            self._serving -= 1
            self.posts -= post

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.place is not None:
            session = forward.session_worker(scope, self.place.count)
            if session is not None and session[0] != self.place.index:
                await self._forward(scope, receive, send, session[0])
                return
            if session is not None:
                scope = forward.with_own_id(scope, session[1], session[2])
            send = forward.naming(send, self.place.index)
        request = Request(scope, receive)
        refusal = self._refuse_unauthorised(request) or await self._security.validate_request(request)
        if refusal is None and scope["method"] == "POST":
            body = await _body(request, self.max_body)
            refusal = self._refuse_body(body)
            if refusal is None:
                receive = _replay(body, receive)  # type: ignore[arg-type]
                request = Request(scope, receive)
        if refusal is None and scope["method"] == "POST" and self.stateless is not None:
            message = _parsed(body)
            if _modern(request, message):
                await self.stateless.serve(request, message, send)
                return
        if refusal is None:
            refusal = await _refuse_unknown_era(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["method"] == "POST" and "mcp-session-id" not in request.headers:
            send = self._sessions_full(scope, receive, send)
        await self.app(scope, receive, send)

    async def _forward(self, scope: Scope, receive: Receive, send: Send, worker: int) -> None:
        """A request of a session ``worker`` holds: to it, once its token is right (it checks the rest)."""
        assert self.place is not None
        request = Request(scope, receive)
        refusal = self._refuse_unauthorised(request)
        body = None
        if refusal is None and scope["method"] == "POST":
            body = await _body(request, self.max_body)
            refusal = self._refuse_body(body)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await forward.forward(scope, receive, send, self.place.socket_path(worker), body)

    def _sessions_full(self, scope: Scope, receive: Receive, send: Send) -> Send:
        """``send`` for a request that opens a session: the SDK's bare 503 at ``max_sessions``
        (logged at each refusal) becomes one that says what to do, logged once a burst."""
        full = False

        async def sending(message: Message) -> None:
            nonlocal full
            if message["type"] == "http.response.start" and message["status"] == 503:
                full = True
            elif not full:
                await send(message)
            elif not message.get("more_body", False):
                if self._burst():
                    log.warning("refusing new sessions with 503: %d are open, max_sessions; they expire after 30 idle minutes", self.max_sessions)
                await self._refuse_sessions()(scope, receive, send)

        return sending

    def _refuse_sessions(self) -> Response:
        message = (
            f"the server has its most sessions open ({self.max_sessions}, max_sessions); end one you no longer use "
            f"(DELETE {PATH} with its Mcp-Session-Id), wait until one has been idle 30 minutes, or raise "
            "max_sessions in the server's configuration"
        )
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": SERVER_BUSY, "message": message}}, status_code=503)

    def _burst(self) -> bool:
        """Whether this refusal starts a burst (none for :data:`BURST_GAP` seconds before)."""
        now = time.monotonic()
        starts, self._last_refusal = now - self._last_refusal >= BURST_GAP, now
        return starts

    def loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """asyncio's accept loop, out of descriptors, logs a traceback for each try (2,048 a
        second); a burst of them is logged once here, as refused requests are."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE) and "accept" in context.get("message", ""):
            if self._burst():
                log.warning("cannot accept connections: no descriptor is left (ulimit -n); they wait until one is, or raise the limit")
            return
        if isinstance(exc, ValueError) and "_start_serving" in repr(context.get("handle")):
            return  # a retry of the accept loop scheduled before the server closed
        loop.default_exception_handler(context)

    def _refuse_busy(self) -> Response:
        if self._burst():
            log.warning(
                "refusing requests with 503: %d are being served, the most this server's descriptor limit (ulimit -n) "
                "leaves room for; raise the limit to serve more at once", self._serving
            )
        message = f"the server is serving its most requests at once ({self.max_requests}); retry shortly"
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": SERVER_BUSY, "message": message}}, status_code=503, headers={"Retry-After": "1"})

    def _refuse_body(self, body: bytes | None) -> Response | None:
        if body is None:
            message = (
                f"the request body is past this server's limit of {self.max_body:,} bytes (a file of max_file_bytes as "
                "JSON text, and the request around it); write a larger file in parts (write_file, then append_file), "
                "or raise max_file_bytes in the server's configuration"
            )
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}, status_code=413)
        if too_deep(body):  # before the SDK's parser, whose recursion it would exhaust
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": TOO_DEEP}}, status_code=400)
        return None

    def _refuse_unauthorised(self, request: Request) -> Response | None:
        scheme, _, presented = request.headers.get("authorization", "").partition(" ")
        # Digests of equal length, so the comparison takes the same time whatever was sent.
        if scheme.lower() == "bearer" and hmac.compare_digest(_digest(presented.strip()), self._digest):
            return None
        client = f"{request.client.host}:{request.client.port}" if request.client else "an unknown client"
        wrong = scheme.lower() == "bearer"
        log.warning("refused %s %s from %s: %s bearer token", request.method, request.url.path, client, "wrong" if wrong else "no")
        challenge = 'Bearer realm="fsmcp", error="invalid_token"' if wrong else 'Bearer realm="fsmcp"'
        return PlainTextResponse(
            "401 Unauthorized: send the server's token as 'Authorization: Bearer <token>'\n",
            status_code=401,
            headers={"WWW-Authenticate": challenge},
        )


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


SERVER_BUSY = -32000
"""JSON-RPC's range for a server's own errors: this one, too many requests at once."""


async def _body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None past ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the app behind the gate: the body already read, then the connection's own."""
    sent = False

    async def replayed() -> dict[str, object]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed  # type: ignore[return-value]


def _parsed(body: bytes | None) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _modern(request: Request, message: Any) -> bool:
    """Whether a POST is a 2026-07-28 request: its envelope, or its version header, says so."""
    if request.headers.get("mcp-protocol-version") in MODERN_VERSIONS:
        return True
    return isinstance(message, dict) and message.get("method") != "initialize" and _enveloped(message.get("params"))


async def _refuse_unknown_era(request: Request) -> Response | None:
    requested = request.headers.get("mcp-protocol-version")
    if requested is None or requested in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    try:
        body = json.loads(await request.body())
    except ValueError:
        body = None
    served = [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_VERSIONS]
    error = {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": f"protocol version {requested} is not served here; use one of {', '.join(served)}",
        "data": {"supported": served, "requested": requested},
    }
    request_id = body.get("id") if isinstance(body, dict) else None
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=400)


class _RequestWire(Wire):
    """One 2026-07-28 request's answer: what the dispatch sends, queued for the HTTP response."""

    live = True

    def __init__(self) -> None:
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def send(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        await self.sent.put(message)  # type: ignore[arg-type]


class Stateless:
    """2026-07-28 over HTTP: each POST answered on its own by stdio's dispatch (:class:`Connection`).

    A connection is made for the request and ends with it: the client's capabilities come with
    the request, its roots with the round that asked for them, its workspace as the handle in
    ``_meta`` (:data:`WORKSPACE_KEY`), a consent question's answers with the ``requestState``
    sealed by :class:`RequestStates` (shared by every process of the state directory). The answer
    is one JSON body, or an event stream when the client accepts one and asked for progress.
    """

    def __init__(self, host: Host, states: RequestStates):
        self.host = host
        self.states = states
        self.tasks: set[asyncio.Task[None]] = set()
        """Tasks' calls still running after their requests were answered (held here, not collected)."""

    async def serve(self, request: Request, message: Any, send: Send) -> None:
        scope = request.scope
        rejection = self._rejection(request, message)
        if rejection is not None:
            code, text, data = rejection
            request_id = message.get("id") if isinstance(message, dict) else None
            error = {"code": code, "message": text, **({"data": data} if data is not None else {})}
            status = ERROR_CODE_HTTP_STATUS.get(code, 400)
            await JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status)(scope, _nothing, send)
            return
        if "id" not in message:  # a notification: nothing in this era is kept to act on it
            await Response(status_code=202)(scope, _nothing, send)
            return
        wire = _RequestWire()
        connection = Connection(self.host, wire, self.states)
        connection.opened = connection.modern = True
        meta = (message.get("params") or {}).get("_meta") if isinstance(message.get("params"), dict) else None
        streams = "text/event-stream" in request.headers.get("accept", "") and isinstance(meta, dict) and "progressToken" in meta
        serving = asyncio.get_running_loop().create_task(self._answer(connection, message))
        if streams:
            await self._stream(request, wire, serving, send)
            return
        watch = asyncio.get_running_loop().create_task(_disconnected(request, serving))
        try:
            await asyncio.wait([serving])
        finally:
            watch.cancel()
            serving.cancel()
        answer = None
        while not wire.sent.empty():
            sent = wire.sent.get_nowait()
            if "id" in sent:
                answer = sent
        if answer is None:  # the call was cancelled: the client left
            return
        status = ERROR_CODE_HTTP_STATUS.get(answer["error"].get("code"), 200) if "error" in answer else 200
        await Response(encode(answer), status_code=status, media_type="application/json")(scope, _nothing, send)

    def _rejection(self, request: Request, message: Any) -> tuple[int, str, Any] | None:
        """What the HTTP layer refuses before the dispatch: no JSON-RPC object, a batch, headers
        that disagree with the body (the SDK's ladder: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``)."""
        from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request

        if not isinstance(message, dict):
            if isinstance(message, list):
                return INVALID_REQUEST, "a batch is not accepted in the 2026-07-28 protocol: send one request per POST", None
            return PARSE_ERROR, "Parse error: the body is not a JSON-RPC message", None
        if "method" not in message:
            return INVALID_REQUEST, "not a JSON-RPC request: this server sends no request a client would answer in this era", None
        if message.get("method") == "initialize":
            return (
                METHOD_NOT_FOUND,
                "initialize is not a method of the 2026-07-28 protocol, which has no handshake: send server/discover, "
                "or send initialize without the 2026-07-28 MCP-Protocol-Version header to open a session of an earlier version",
                "initialize",
            )
        if request.headers.get("mcp-session-id") is not None:
            return INVALID_REQUEST, "a 2026-07-28 request carries no Mcp-Session-Id: that protocol has no sessions", None
        verdict = classify_inbound_request(message, headers={k.lower(): v for k, v in request.headers.items()}, supported_modern_versions=MODERN_VERSIONS)
        if isinstance(verdict, InboundLadderRejection):
            return verdict.code, verdict.message, verdict.data
        return None

    async def _answer(self, connection: Connection, message: dict[str, Any]) -> None:
        try:
            await connection.receive(message)
            if calls := _plain(connection):
                await asyncio.wait(calls)
        finally:
            calls = _plain(connection)
            for call in calls:  # the client left: as a notifications/cancelled would, over stdio
                call.cancel()
            if calls:
                await asyncio.wait(calls, timeout=STOP_GRACE)
            # A task (the tasks extension) runs on after its answer: the client polls it, from
            # this process or another, in the task store; the server's stop cancels it.
            for task in list(connection.running.values()):
                if task not in calls and not task.done():
                    self.tasks.add(task)
                    task.add_done_callback(self.tasks.discard)

    async def _stream(self, request: Request, wire: _RequestWire, serving: asyncio.Task[None], send: Send) -> None:
        """The answer as server-sent events: each progress notification, then the response."""

        async def events() -> AsyncIterator[bytes]:
            while True:
                sent = await wire.sent.get()
                yield b"event: message\ndata: " + encode(sent).rstrip(b"\n") + b"\n\n"
                if "id" in sent:
                    return

        watch = asyncio.get_running_loop().create_task(_disconnected(request, serving))
        try:
            await StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})(request.scope, _nothing, send)
        finally:
            watch.cancel()
            if not serving.done():
                serving.cancel()


def _plain(connection: Connection) -> list[asyncio.Task[Any]]:
    """The connection's calls its answer waits for: all but tasks' (the tasks extension)."""
    return [call for key, call in connection.running.items() if not (isinstance(key, tuple) and key[0] == "task")]


async def _disconnected(request: Request, serving: asyncio.Task[None]) -> None:
    """Cancel the call when its client hangs up before the answer (no one is left to read it)."""
    while not serving.done():
        message = await request.receive()
        if message["type"] == "http.disconnect":
            serving.cancel()
            return


async def _nothing() -> dict[str, Any]:
    """``receive`` for a response sent without reading more of the request (it was read whole)."""
    await asyncio.Event().wait()
    return {"type": "http.disconnect"}


def request_states() -> RequestStates:
    """The sealer of 2026-07-28 request states, its key made or read; :class:`HttpSetupError`
    saying what to change when the state directory is not this user's alone."""
    try:
        return RequestStates()
    except (ValueError, OSError) as exc:
        raise HttpSetupError(f"cannot keep the 2026-07-28 request states: {exc}") from None


def app_for(host: Host, token: str, listener: Listener, place: Place | None = None, states: RequestStates | None = None) -> Gate:
    """The ASGI app: the gate in front of the SDK's streamable-HTTP app (one session per client)."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=listener.hosts, allowed_origins=listener.origins
    )
    server = build_server(host)
    stateless = Stateless(host, states or request_states())
    max_body = max_message_bytes(host.settings.max_file_bytes)  # the longest message, as over stdio
    sessions = host.settings.max_sessions
    app = server.streamable_http_app(streamable_http_path=PATH, transport_security=security, max_request_body_size=max_body, max_sessions=sessions)
    logging.getLogger("mcp.server.streamable_http_manager").addFilter(_SessionsRefused())
    return Gate(app, token, security, max_body=max_body, max_requests=request_limit(), max_sessions=sessions, stateless=stateless, place=place)


class _SessionsRefused(logging.Filter):
    """The SDK logs each session it refuses; the gate logs a burst of them once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Refusing to open a new session")


async def serve_http(
    host: Host,
    token: str,
    listener: Listener,
    place: Place | None = None,
    private: socket.socket | None = None,
    life: int | None = None,
    states: RequestStates | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT; a worker (``place``) serves its private socket too, and stops
    as if signalled when ``life`` (its supervisor's pipe) reads EOF."""
    gate = app_for(host, token, listener, place, states)
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(gate.loop_exception)
    config = uvicorn.Config(
        gate,
        log_config=None,  # our stderr logging; uvicorn's own would send access lines to stdout
        log_level=logging.getLogger().level,
        ws="none",
        lifespan="on",
        timeout_graceful_shutdown=STOP_GRACE,  # SIGTERM and SIGINT end both transports alike
        # Longer than clients keep an idle connection (undici 4 s, httpx 5 s): at uvicorn's 5 s, a
        # client reusing a connection as the server closed it got "other side closed" mid-call.
        timeout_keep_alive=KEEP_ALIVE,
    )
    server = _Server(config, gate)
    if life is not None:

        def orphaned() -> None:
            loop.remove_reader(life)
            log.warning("worker %d: its supervisor is gone; stopping", place.index if place else 0)
            server.should_exit = True

        loop.add_reader(life, orphaned)
    await server.serve(sockets=[listener.sock, *([private] if private is not None else [])])


class _Server(uvicorn.Server):
    """uvicorn's server, ending on SIGTERM or SIGINT as stdio does: no new connection, the calls in
    flight have :data:`STOP_GRACE` seconds to finish and answer, then exit 0."""

    def __init__(self, config: uvicorn.Config, gate: Gate):
        super().__init__(config)
        self.gate = gate
        # sse_starlette ends every event stream, a call's answer included, as soon as uvicorn
        # hears a signal; they end here once the calls are done instead.
        AppStatus.disable_automatic_graceful_drain()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        with super().capture_signals():
            yield
            # uvicorn raises the signal again once it has served, killing the process (-15);
            # the signal was handled: the server ended as asked.
            self._captured_signals.clear()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_GRACE
        while self.gate.posts and not self.force_exit and loop.time() < deadline:
            await asyncio.sleep(0.05)
        AppStatus.should_exit = True  # the streams left (a session's GET) end now
        await super().shutdown(sockets)
