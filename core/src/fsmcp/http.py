"""``fsmcp serve --transport http``: streamable HTTP on uvicorn, behind a bearer token."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import os
import socket
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.types import UNSUPPORTED_PROTOCOL_VERSION
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from .config import Settings
from .server import build_server

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .host import Host

log = logging.getLogger("fsmcp")

TOKEN_ENV = "FSMCP_TOKEN"
PATH = "/mcp"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
HOW_TO_SET_A_TOKEN = (
    f"put a secret in a file and pass --token-file FILE (token_file in fsmcp.toml), or set {TOKEN_ENV}; "
    "for example: python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > ~/.fsmcp-token && "
    "chmod 600 ~/.fsmcp-token"
)


class HttpSetupError(Exception):
    """HTTP serving cannot start as configured; the message says what to change."""


@dataclass
class Listener:
    """The bound socket, and what requests to it may say in ``Host`` and ``Origin``."""

    sock: socket.socket
    address: str
    port: int
    loopback: bool
    hosts: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{_bracketed(self.address)}:{self.port}{PATH}"


def read_token(settings: Settings, environ: Mapping[str, str] = os.environ) -> str:
    """The bearer token: ``token_file``'s content, else ``$FSMCP_TOKEN``; stripped, never empty."""
    if settings.token_file:
        path = Path(settings.token_file).expanduser()
        try:
            token = path.read_text(encoding="utf-8").strip()
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise HttpSetupError(f"cannot read the token file {path} ({exc}); {HOW_TO_SET_A_TOKEN}") from None
        if not token:
            raise HttpSetupError(f"the token file {path} is empty; {HOW_TO_SET_A_TOKEN}")
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            log.warning("the token file %s is readable by other users; chmod 600 it", path)
        return token
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise HttpSetupError(f"--transport http needs a bearer token that every request must carry: {HOW_TO_SET_A_TOKEN}")
    return token


def listen(settings: Settings) -> Listener:
    """Bind ``host:port`` (port 0: any free one) and work out the accepted Host and Origin values."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(settings.host, settings.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        raise HttpSetupError(f"cannot listen on {settings.host}:{settings.port} ({exc}); choose another --host or --port") from None
    bound, port = sock.getsockname()[:2]
    ip = ipaddress.ip_address(bound)
    listener = Listener(sock, bound, port, ip.is_loopback)
    names = list(LOOPBACK_NAMES)
    if not ip.is_loopback and not ip.is_unspecified:
        names.append(_bracketed(bound))
    listener.hosts = [f"{name}:{port}" for name in names] + settings.allow_hosts
    listener.origins = [f"http://{name}:{port}" for name in names] + settings.allow_origins
    return listener


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


class Gate:
    """What a request must pass before the MCP app sees it, in this order.

    1. ``Authorization: Bearer <token>``, compared in constant time: else 401.
    2. ``Host`` and ``Origin`` among the accepted values (DNS rebinding): else 421 / 403.
    3. A handshake-era protocol version: a 2026-07-28 request over HTTP has no session to keep
       a client's roots and workspace in, so it is told which versions are served (-32022), and
       clients that speak both fall back to the handshake on their own.
    """

    def __init__(self, app: ASGIApp, token: str, security: TransportSecuritySettings):
        self.app = app
        self._digest = _digest(token)
        self._security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        refusal = self._refuse_unauthorised(request) or await self._security.validate_request(request)
        if refusal is None:
            refusal = await _refuse_modern_era(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refuse_unauthorised(self, request: Request) -> Response | None:
        scheme, _, presented = request.headers.get("authorization", "").partition(" ")
        # Digests of equal length, so the comparison takes the same time whatever was sent.
        if scheme.lower() == "bearer" and hmac.compare_digest(_digest(presented.strip()), self._digest):
            return None
        client = f"{request.client.host}:{request.client.port}" if request.client else "an unknown client"
        if scheme.lower() == "bearer":
            log.warning("refused %s %s from %s: wrong bearer token", request.method, request.url.path, client)
            challenge = 'Bearer realm="fsmcp", error="invalid_token"'
        else:
            log.warning("refused %s %s from %s: no bearer token", request.method, request.url.path, client)
            challenge = 'Bearer realm="fsmcp"'
        return PlainTextResponse(
            "401 Unauthorized: send the server's token as 'Authorization: Bearer <token>'\n",
            status_code=401,
            headers={"WWW-Authenticate": challenge},
        )


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


async def _refuse_modern_era(request: Request) -> Response | None:
    requested = request.headers.get("mcp-protocol-version")
    if requested is None or requested in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    try:
        body = json.loads(await request.body())
    except ValueError:
        body = None
    error = {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": f"protocol version {requested} is not served over HTTP here: it keeps no session, and this "
        "server keeps each client's roots and workspace per session; use one of the handshake versions",
        "data": {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": requested},
    }
    request_id = body.get("id") if isinstance(body, dict) else None
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=400)


def app_for(host: Host, token: str, listener: Listener) -> ASGIApp:
    """The ASGI app: the gate in front of the SDK's streamable-HTTP app (one session per client)."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=listener.hosts, allowed_origins=listener.origins
    )
    server = build_server(host)
    return Gate(server.streamable_http_app(streamable_http_path=PATH, transport_security=security), token, security)


async def serve_http(host: Host, token: str, listener: Listener) -> None:
    config = uvicorn.Config(
        app_for(host, token, listener),
        log_config=None,  # our stderr logging; uvicorn's own would send access lines to stdout
        log_level=logging.getLogger().level,
        ws="none",
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    await uvicorn.Server(config).serve(sockets=[listener.sock])
