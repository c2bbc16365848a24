"""Asking the user before a refusal stands: a veto that carries a question, and the answers.

A :class:`Refusal` with ``ask`` (from ``fsmcp_check_path``) refuses a read like any reason. When
the transport can ask the client's user (MCP elicitation) and the operator allows asking
(``ask_user``), the call runs under a :class:`Consent`: each such refusal it meets is noted,
the user is asked about its path (allow once / deny), and the call runs again with the paths
the user allowed let through, for that call only. Only read-only tools ask: a tool that
changes files would carry what it read into a file that outlives the call.

An answer is about a file, not a name (docs/security.md): a file swapped in at the path while the
user was asked is refused, by :meth:`Consent.opened` and :meth:`Consent.unhidden`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..api.errors import ErrorCode, ToolError
from .roots import Access, ResolvedPath, echoed, shown

log = logging.getLogger("fsmcp")

MAX_ASKS = 5
"""Questions one call may put to the user; refusals met past these stand unasked."""
ALLOW, DENY = "allow_once", "deny"
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {
            "type": "string",
            "title": "Answer",
            "enum": [ALLOW, DENY],
            "enumNames": ["Allow once", "Deny"],
            "default": DENY,
        }
    },
    "required": ["answer"],
}
"""The form the user fills in: one choice, deny unless chosen otherwise."""

Ask = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends ``elicitation/create`` (a message, a requested schema) and returns the client's raw result."""


class Refusal(str):
    """A reason :func:`fsmcp_check_path` returns to refuse, which may also be put to the user
    (``ask``; None: a plain refusal). When the user is asked: docs/hooks.md (``fsmcp_check_path``)."""

    ask: str | None

    def __new__(cls, reason: str, ask: str | None = None) -> Refusal:
        self = super().__new__(cls, reason)
        self.ask = ask
        return self


@dataclass
class Consent:
    """One tool call's questions to the user and their answers, keyed by real path.

    ``ask`` puts a question to the user there and then (handshake era, HTTP); without it the
    transport asks between two rounds of the call (2026-07-28: ``waiting`` holds the questions
    and :meth:`answer` takes the replies).
    """

    timeout: float
    ask: Ask | None = None
    allowed: dict[str, Identity] = field(default_factory=dict)
    """Path → the file (device, inode; None when nothing was there) the user allowed at it."""
    declined: dict[str, str] = field(default_factory=dict)
    """Path → why its refusal stands (the user declined, did not answer, could not be asked)."""
    asked: int = 0
    met: dict[str, str] = field(default_factory=dict)
    """Path → question, for the refusals met in the latest run that no answer covers yet."""
    found: dict[str, Identity] = field(default_factory=dict)
    """Path → the file at it when its refusal was first met: what the user is asked about."""
    waiting: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Key → (path, question): the questions a 2026-07-28 transport puts in ``inputRequests``."""

    def check(self, raw: str, resolved: ResolvedPath, access: Access, reasons: list[str]) -> None:
        """Refuse, unless every reason asks and the user allowed this path for this call."""
        path = str(resolved.path)
        asks = [r.ask for r in reasons if isinstance(r, Refusal) and r.ask]
        if access is Access.READ and len(asks) == len(reasons):
            if path in self.allowed:
                self.same(path, identity(path))
                return
            if path in self.declined:
                raise _refused(raw, reasons[0], self.declined[path])
            self.met.setdefault(path, asks[0])
            self.found.setdefault(path, identity(path))
        raise _refused(raw, reasons[0])

    def same(self, path: str, now: Identity) -> None:
        """Refuse ``path`` (an allowed one) unless ``now`` is the file the user was asked about;
        the answer is withdrawn, so that the next call asks about the file as it is."""
        if now == self.allowed[path]:
            return
        del self.allowed[path]
        self.declined[path] = CHANGED
        raise ToolError(ErrorCode.ACCESS_DENIED, f"{shown(path)} is refused: {CHANGED}")

    def opened(self, path: object, st: os.stat_result) -> None:
        """Refuse a file just opened at ``path`` that the user allowed, unless it is the one asked
        about (the path may have been swapped between the policy's check and the open)."""
        if self.allowed and (key := str(path)) in self.allowed:
            self.same(key, (st.st_dev, st.st_ino))

    def unhidden(self, hidden: list[str]) -> tuple[list[str], dict[str, tuple[int, int]]]:
        """``hidden`` less the paths the user allowed for this call, and those with their files:
        each checked to be the file the user was asked about, for the program to be granted
        that file alone (``landlock.Ruleset.pinned``), never what is at its path later."""
        pinned: dict[str, tuple[int, int]] = {}
        for path in hidden:
            if path in self.allowed:
                self.same(path, now := identity(path))
                if now is not None:
                    pinned[path] = now
        return [path for path in hidden if path not in pinned], pinned

    @contextmanager
    def running(self) -> Iterator[None]:
        self.met = {}
        token = CURRENT.set(self)
        try:
            yield
        finally:
            CURRENT.reset(token)

    def questions(self) -> list[tuple[str, str]]:
        """The refusals of the latest run still to ask about, within the call's bound."""
        fresh = [(path, question) for path, question in self.met.items() if path not in self.allowed and path not in self.declined]
        room = max(0, MAX_ASKS - self.asked)
        for path, _ in fresh[room:]:
            self.declined[path] = f"the user was already asked {MAX_ASKS} times in this call"
        return fresh[:room]

    async def settle(self) -> bool:
        """Ask about the refusals the latest run met; True when the call must run again.

        Without ``ask`` the questions wait in ``waiting`` for the transport, and the call
        answers as it is (the transport sends the questions instead).
        """
        fresh = self.questions()
        if not fresh:
            return False
        self.asked += len(fresh)
        if self.ask is None:
            self.waiting = {f"fsmcp.ask.{self.asked - len(fresh) + n}": pair for n, pair in enumerate(fresh)}
            return False
        import anyio  # here, not at start-up: a start answers tools/list without it

        for path, question in fresh:
            try:
                with anyio.fail_after(self.timeout):
                    answer = await self.ask(message(question, path), SCHEMA)
            except TimeoutError:
                self.declined[path] = f"the user was asked and did not answer within {self.timeout:g} s"
            except Exception as exc:
                log.warning("asking the user about %s failed: %s", path, exc)
                self.declined[path] = f"asking the user failed ({exc})"
            else:
                self.decide(path, answer)
        return True

    def decide(self, path: str, answer: Any) -> None:
        """Record the user's answer (an ``ElicitResult``, raw) about ``path``."""
        answer = answer.model_dump() if hasattr(answer, "model_dump") else answer
        action = answer.get("action") if isinstance(answer, dict) else None
        content = answer.get("content") if isinstance(answer, dict) else None
        if action == "accept" and isinstance(content, dict) and content.get("answer") == ALLOW:
            self.allowed[path] = self.found.get(path)
            self.declined.pop(path, None)
        elif action == "cancel":
            self.declined[path] = "the user was asked and dismissed the question"
        else:
            self.declined[path] = "the user was asked and declined"

    def input_requests(self) -> dict[str, Any]:
        """The ``inputRequests`` of a 2026-07-28 ``input_required`` result for ``waiting``."""
        return {key: {"method": "elicitation/create", "params": form(message(q, path), SCHEMA)} for key, (path, q) in self.waiting.items()}

    def answer(self, responses: dict[str, Any]) -> None:
        """Take a 2026-07-28 client's ``inputResponses`` to the questions ``waiting`` held."""
        for key, (path, _) in self.waiting.items():
            if key in responses:
                self.decide(path, responses[key])
            else:
                self.declined[path] = "the client sent no answer from the user"
        self.waiting = {}

    def audit(self) -> dict[str, Any]:
        """The fields this call's audit line gets."""
        fields: dict[str, Any] = {}
        if self.allowed:
            fields["allowedOnce"] = sorted(self.allowed)
        if self.declined:
            fields["refusedAfterAsking"] = sorted(self.declined)
        if self.waiting:
            fields["askingUser"] = sorted(path for path, _ in self.waiting.values())
        return fields


Identity = tuple[int, int] | None
"""A file as the user was asked about it: device and inode (None: nothing was there)."""
CHANGED = (
    "the file changed while the user was asked (it was moved, replaced or swapped for another since the question); "
    "nothing of it was read: call again to ask about the file as it is now"
)


def identity(path: str) -> Identity:
    """The file at ``path`` now, the entry itself (a link put there is another file)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


CURRENT: ContextVar[Consent | None] = ContextVar("fsmcp_consent", default=None)
"""The consent of the call in progress, when its user can be asked (read where a call opens a
file: a read no one can be asked about looks no further than this)."""


def refuse(raw: str, resolved: ResolvedPath, access: Access, reasons: list[str]) -> None:
    """Raise ``ACCESS_DENIED`` for the vetoes ``reasons``, unless the user allowed this read."""
    consent = CURRENT.get()
    if consent is None:
        raise _refused(raw, reasons[0])
    consent.check(raw, resolved, access, reasons)


def elicits_forms(capabilities: Any) -> bool:
    """Whether a client's declared capabilities include form elicitation (``{}`` means forms, per 2025-11-25)."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)


def message(question: str, path: str) -> str:
    """The question, naming the real path when the policy named it otherwise (through a link)."""
    where = "" if shown(path) in question else f" ({shown(path)})"
    return f"{question}{where}. Allow it this once, or deny?"


def form(text: str, schema: dict[str, Any], with_mode: bool = True) -> dict[str, Any]:
    """``elicitation/create`` params; ``mode`` exists from protocol 2025-11-25 on."""
    return {**({"mode": "form"} if with_mode else {}), "message": text, "requestedSchema": schema}


def call_digest(name: str, arguments: Any) -> str:
    """What ties a 2026-07-28 call's later rounds to its first: its tool and arguments."""
    return hashlib.sha256(json.dumps([name, arguments], sort_keys=True, default=str).encode()).hexdigest()


def _refused(raw: str, reason: str, after: str | None = None) -> ToolError:
    text = f"{echoed(raw)} is refused: {reason}"
    if after:
        text = f"{text.rstrip('.')}; {after}."
    return ToolError(ErrorCode.ACCESS_DENIED, text)
