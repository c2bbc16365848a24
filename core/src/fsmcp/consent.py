"""Asking the user before a refusal stands: a veto that carries a question (``Refusal``)."""

from __future__ import annotations


class Refusal(str):
    """A reason :func:`fsmcp_check_path` returns to refuse, which may also be put to the user.

    ``Refusal("the file is protected by the secrets policy ...", ask="The agent wants to read
    .env")`` refuses like the plain string, and lets the host ask the user ``ask`` where the
    client can answer (MCP elicitation) and the operator allows asking; an accepted answer lets
    exactly that path through for that one call. ``ask=None`` is a plain refusal.
    """

    ask: str | None

    def __new__(cls, reason: str, ask: str | None = None) -> Refusal:
        self = super().__new__(cls, reason)
        self.ask = ask
        return self
