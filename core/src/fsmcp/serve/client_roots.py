"""One connection's MCP roots: asked of the client, and narrowing what its calls may touch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..paths.roots import RootSet

log = logging.getLogger("fsmcp")

ROOTS_TIMEOUT = 10.0
"""Seconds a handshake-era client has to answer ``roots/list`` before the call is refused."""


class ClientRoots:
    """One connection's view of the roots, narrowed by the client's MCP roots when it has any.

    Handshake era: asked with ``roots/list`` before the first tool call, again after
    ``notifications/roots/list_changed``. 2026-07-28 era: asked through an
    ``InputRequiredResult`` on the first tool call, then cached for the connection.
    """

    def __init__(self, roots: RootSet):
        self.roots = roots
        self.view = roots.new_view()
        self.known = False
        self._lock = asyncio.Lock()

    def apply(self, answer: Any) -> None:
        # Lenient on purpose: the SDK's ListRootsResult rejects the whole answer for one root that
        # is not file://, and a malformed root must be refused alone.
        listed = answer.get("roots") if isinstance(answer, dict) else None
        if not isinstance(listed, (list, tuple)):
            self.fail("its answer to roots/list is not a list of roots")
            return
        uris = [item.get("uri") if isinstance(item, dict) else item for item in listed]
        for problem in self.roots.narrow(self.view, uris):
            log.warning(problem)
        log.info("client roots %s; usable roots: %s", uris, ", ".join(r.describe() for r in self.view.roots) or "none")
        self.known = True

    def fail(self, why: str) -> None:
        # Fail closed, and ask again at the next call: falling back to the operator's roots
        # would silently widen what the client asked for.
        log.warning("client roots unavailable: %s", why)
        self.view.refusal = f"the client offers MCP roots, but {why}; no path is allowed until it lists them (try again)"
        self.known = False

    def changed(self) -> None:
        self.known = False

    async def ask(self, list_roots: Callable[[], Awaitable[Any]]) -> None:
        """Handshake era: send ``roots/list`` on the back-channel, unless the answer is current.

        ``list_roots`` sends the request and returns the client's raw answer; any exception it
        raises (an error reply, a closed connection) refuses the calls until the next ask.
        """
        import anyio  # here, not at start-up: a start answers tools/list without it

        async with self._lock:
            if self.known:
                return
            try:
                with anyio.fail_after(ROOTS_TIMEOUT):
                    answer = await list_roots()
            except TimeoutError:
                self.fail(f"it did not answer roots/list within {ROOTS_TIMEOUT:g} seconds")
            except Exception as exc:
                self.fail(f"roots/list failed ({exc})")
            else:
                self.apply(answer)
