"""A 2026-07-28 call's ``requestState`` over HTTP: self-contained, authenticated, once only.

Between two rounds of a call (the user's answer to a consent question, the client's roots) the
server keeps nothing in memory: the retry may land on another worker or another replica. What
the next round needs (the answers so far, the roots the client listed) travels in the
``requestState`` the client echoes, sealed with an HMAC-SHA256 under a key kept ``0600`` in the
XDG state directory (``$XDG_STATE_HOME/fsmcp/http/request-state.key``), which every process
sharing that directory reads. A state is tied to its call (tool and arguments), expires after
:data:`STATE_TTL` seconds, and is spent at its first use: its nonce is recorded under
``…/http/spent`` (a file made with ``O_EXCL``, which two processes cannot both make), so that
an "allow once" is used once, whichever process the replay reaches.

The state is read back as untrusted input: a forged, altered, stale, spent or foreign one is
refused (:class:`StateRefused`), with what to do next.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths.consent import Consent, call_digest
from ..paths.state import private_dir, state_home

log = logging.getLogger("fsmcp")

STATE_TTL = 1800.0
"""Seconds a ``requestState`` stays good: the user may take a while to answer."""
KEY_NAME = "request-state.key"
KEY_BYTES = 32
_DOMAIN = b"fsmcp request state v1\0"
_FIX = "set XDG_STATE_HOME to a directory of this user's alone, the same for every process serving these clients"
_SWEEP_EVERY = 60.0
"""Seconds between two sweeps of the spent nonces past their state's life, in one process."""


def http_state_dir() -> Path:
    """Where the HTTP transport keeps what its processes share: the key, the spent nonces."""
    return Path(os.path.realpath(state_home() / "fsmcp" / "http"))


class StateRefused(Exception):
    """A ``requestState`` that is not honoured; ``why`` is ``forged``, ``expired``, ``spent`` or ``other-call``."""

    def __init__(self, why: str, message: str):
        super().__init__(message)
        self.why, self.message = why, message


@dataclass
class Resumed:
    """What a sealed state brings back: the consent so far, the client's roots answer (None: none)."""

    consent: Consent
    roots: Any


class RequestStates:
    """Seals and opens the ``requestState`` of 2026-07-28 calls, for every process of one state directory."""

    def __init__(self, directory: Path | None = None, ttl: float = STATE_TTL):
        self.directory = directory or http_state_dir()
        private_dir(self.directory, "the HTTP state directory", _FIX, "forge the state of calls waiting for their user's answer", "the key sealing it")
        self.spent = self.directory / "spent"
        private_dir(self.spent, "the HTTP state directory", _FIX, "replay a user's answer")
        self.ttl = ttl
        self._key = _key(self.directory / KEY_NAME)
        self._swept = 0.0

    def seal(self, name: str, arguments: Any, asking: Consent, roots: Any, timeout: float) -> str:
        body = {
            "call": call_digest(name, arguments),
            "expires": time.time() + self.ttl,
            "nonce": os.urandom(16).hex(),
            "consent": _consent_state(asking),
            "roots": roots,
            "timeout": timeout,
        }
        payload = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).rstrip(b"=")
        return f"{payload.decode()}.{self._mac(payload)}"

    def open(self, state: Any, name: str, arguments: Any) -> Resumed:
        """The state ``state`` sealed for this call; :class:`StateRefused` when it is not one to honour."""
        again = "call the tool again without requestState and inputResponses: the user is asked afresh"
        if not isinstance(state, str) or state.count(".") != 1:
            raise StateRefused("forged", f"the requestState is not one this server made; {again}")
        payload, mac = state.split(".")
        if not hmac.compare_digest(self._mac(payload.encode()), mac):
            raise StateRefused(
                "forged",
                f"the requestState is not one this server made, or was altered (or the server's key changed: "
                f"every process serving these clients must share one state directory); {again}",
            )
        try:
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except ValueError:
            raise StateRefused("forged", f"the requestState cannot be read; {again}") from None
        if body.get("call") != call_digest(name, arguments):
            raise StateRefused("other-call", f"the requestState belongs to another call (another tool or other arguments); {again}")
        if not time.time() < body.get("expires", 0):
            raise StateRefused("expired", f"the requestState expired ({self.ttl:g} s after the question was put); {again}")
        self._spend(str(body.get("nonce")), body["expires"])
        return Resumed(_consent(body["consent"], body.get("timeout", 60.0)), body.get("roots"))

    def _mac(self, payload: bytes) -> str:
        digest = hmac.new(self._key, _DOMAIN + payload, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def _spend(self, nonce: str, expires: float) -> None:
        """Record ``nonce`` as used, or refuse it as replayed: one file each, made exclusively."""
        if not nonce.isalnum() or len(nonce) != 32:
            raise StateRefused("forged", "the requestState is not one this server made")
        self._sweep()
        try:
            fd = os.open(self.spent / nonce, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            raise StateRefused(
                "spent",
                "the requestState was used already (a retry of a round that was answered): each answer counts once; "
                "call the tool again without requestState and inputResponses, and the user is asked afresh",
            ) from None
        try:
            os.write(fd, f"{expires:.0f}\n".encode())
        finally:
            os.close(fd)

    def _sweep(self) -> None:
        """Remove the nonces whose states have expired (a replay of one is refused as expired)."""
        now = time.time()
        if now - self._swept < _SWEEP_EVERY:
            return
        self._swept = now
        try:
            with os.scandir(self.spent) as entries:
                for entry in entries:
                    try:
                        if entry.stat(follow_symlinks=False).st_mtime + self.ttl + 60 < now:
                            os.unlink(entry.path)
                    except OSError:
                        pass
        except OSError as exc:
            log.warning("cannot sweep the spent request states in %s: %s", self.spent, exc)


def _key(path: Path) -> bytes:
    """The key at ``path``, made when missing: written whole under another name, then linked into
    place, so that two processes starting at once end with the same key (the second's link fails)."""
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            pass
        else:
            with os.fdopen(fd, "rb") as file:
                st = os.fstat(file.fileno())
                if st.st_uid != os.geteuid() or st.st_mode & 0o077:
                    raise ValueError(f"the request-state key {path} is open to other users or not this user's; remove it (a new one is made), or {_FIX}")
                key = file.read()
            if len(key) == KEY_BYTES:
                return key
            raise ValueError(f"the request-state key {path} is damaged ({len(key)} bytes, not {KEY_BYTES}); remove it (a new one is made)")
        fresh = path.with_name(f".{KEY_NAME}.{os.getpid()}.{os.urandom(4).hex()}")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(fresh, path)
        except FileExistsError:
            pass  # another process made it first: read theirs
        finally:
            os.unlink(fresh)
    raise ValueError(f"the request-state key {path} cannot be made or read; {_FIX}")


def _consent_state(asking: Consent) -> dict[str, Any]:
    return {
        "allowed": asking.allowed,
        "declined": asking.declined,
        "asked": asking.asked,
        "found": asking.found,
        "waiting": asking.waiting,
    }


def _identity(value: Any) -> tuple[int, int] | None:
    return None if value is None else (int(value[0]), int(value[1]))


def _consent(state: dict[str, Any], timeout: float) -> Consent:
    return Consent(
        timeout,
        allowed={str(p): _identity(i) for p, i in state["allowed"].items()},
        declined={str(p): str(w) for p, w in state["declined"].items()},
        asked=int(state["asked"]),
        found={str(p): _identity(i) for p, i in state["found"].items()},
        waiting={str(k): (str(v[0]), str(v[1])) for k, v in state["waiting"].items()},
    )
