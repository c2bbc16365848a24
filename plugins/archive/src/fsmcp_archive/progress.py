"""Progress notifications for long archive work, sent now and then, and cancellation checks."""

from __future__ import annotations

from fsmcp import ToolContext

MEMBER_STEP = 64
BYTE_STEP = 1 << 20


class Progress:
    """Counts work (one unit per member, one per byte) and reports it every so many units.

    ``phase`` names what is being done; ``total`` is known once a phase starts. Every call checks
    for cancellation, so a long loop that reports also stops when the client cancels.
    """

    def __init__(self, ctx: ToolContext, phase: str, total: int | None = None):
        self.ctx = ctx
        self.phase = phase
        self.total = total
        self.members = 0
        self.bytes = 0
        self._done = 0
        self._sent = 0
        self._members_since = 0

    def start(self, phase: str, total: int) -> None:
        """Begin the next phase, whose work will bring the count to ``total``."""
        self.phase = phase
        self.total = self._done + total
        self.members = self.bytes = 0

    def add(self, *, members: int = 0, data: int = 0) -> None:
        self.ctx.check_cancelled()
        self.members += members
        self.bytes += data
        self._done += members + data
        self._members_since += members
        if self._members_since >= MEMBER_STEP or self._done - self._sent >= BYTE_STEP:
            self.send()

    def send(self) -> None:
        """Report now, unless nothing moved since the last report (values must increase)."""
        if self._done <= self._sent:
            return
        self._sent = self._done
        self._members_since = 0
        total = max(self.total, self._done) if self.total is not None else None
        self.ctx.progress(self._done, total, f"{self.phase}: {self.members:,} members, {self.bytes:,} bytes")
