"""The HTTP transport's socket and token: all a supervisor of worker processes needs before it forks.

Apart from :mod:`fsmcp.serve.http` so that the supervisor (:mod:`fsmcp.serve.workers`) binds the
port and reads the token without importing uvicorn, starlette or the SDK's server.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..api.config import Settings

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
    hosts: list[str]
    origins: list[str]

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
    names = list(LOOPBACK_NAMES)
    if not ip.is_loopback and not ip.is_unspecified:
        names.append(_bracketed(bound))
    hosts = [f"{name}:{port}" for name in names] + settings.allow_hosts
    origins = [f"http://{name}:{port}" for name in names] + settings.allow_origins
    return Listener(sock, bound, port, ip.is_loopback, hosts, origins)


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address
