"""The audit log as a plugin: one JSON line per tool call a client made (``--audit-log FILE``).

It wraps each call (``fsmcp_around_call``) in :meth:`fsmcp.api.audit.AuditLog.recording`, outermost,
so that a call consent runs again is still one line. Registered only when the operator names a
log; ``disable = ["fsmcp.audit"]`` keeps none even then, and a plugin of that name replaces it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from ..api.audit import AuditLog
from ..api.errors import ErrorCode, ToolError
from ..api.hooks import hookimpl

if TYPE_CHECKING:
    from ..api.config import Settings
    from ..run.runner import Around, Outcome, ToolCall

NAME = "fsmcp.audit"


class Audit:
    def __init__(self, log: AuditLog):
        self.log = log

    @classmethod
    def for_settings(cls, settings: Settings) -> Audit | None:
        if not settings.audit_log:
            return None
        return cls(AuditLog(settings.audit_log, settings.audit_log_max_bytes, settings.audit_log_keep))

    @hookimpl(tryfirst=True)
    def fsmcp_around_call(self, call: ToolCall) -> Around:
        # A call the transport refused may name no tool (its params had no string name).
        tool = call.name or None

        async def around(run: Callable[[], Awaitable[Outcome]]) -> Outcome:
            with self.log.recording(call.session, tool, call.arguments, call.notes, call.changed) as line:
                try:
                    outcome = await run()
                except anyio.get_cancelled_exc_class():
                    line["outcome"] = "cancelled"
                    raise
                except BaseException:  # a wrapper's bug: the client gets the transport's internal error
                    line["outcome"] = ErrorCode.INTERNAL_ERROR.value
                    raise
                if isinstance(outcome, ToolError):
                    line["outcome"] = outcome.code.value
                if call.asking is not None and call.asking.waiting:  # the client gets the questions, not this outcome
                    line["outcome"] = "input_required"
            return outcome

        async def refused(run: Callable[[], Awaitable[Outcome]]) -> Outcome:
            # The client gets the transport's error, whatever the wrappers inside do.
            with self.log.recording(call.session, tool, call.arguments, call.notes, call.changed) as line:
                line["outcome"], line["jsonrpcError"] = ErrorCode.INVALID_PARAMS.value, call.refused
                return await run()

        return around if call.refused is None else refused
