"""Consent as a plugin: a read-only call the policy refused may ask the client's user, and run again.

Where the transport can ask (``call.asking``) and the operator allows asking (``ask_user``),
it wraps the call (``fsmcp_around_call``), next to the tool: each round runs under the call's
:class:`fsmcp.paths.consent.Consent`, which notes the refusals that carry a question; the user is
asked about them, and the call runs again with the paths allowed let through (see
:mod:`fsmcp.paths.consent`). ``disable = ["fsmcp.consent"]`` asks nobody: every refusal stands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..api.hooks import hookimpl

if TYPE_CHECKING:
    from ..api.config import Settings
    from ..run.runner import Around, Outcome, ToolCall

NAME = "fsmcp.consent"


@hookimpl(trylast=True)
def fsmcp_around_call(call: ToolCall, settings: Settings) -> Around | None:
    asking = call.asking
    # Only a read-only tool asks: one that changes files would carry what it read into a file that outlives the call.
    if asking is None or not settings.ask_user or call.tool is None or not call.tool.annotations.read_only:
        return None

    async def around(run: Callable[[], Awaitable[Outcome]]) -> Outcome:
        while True:  # bounded: each round asks at least once more, and a call asks at most MAX_ASKS times
            with asking.running():
                outcome = await run()
            if not await asking.settle():
                call.note(**asking.audit())
                return outcome

    return around
