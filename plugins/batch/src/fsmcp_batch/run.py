"""Running a batch's steps in order, saving what each change touches when the batch is transactional.

A transactional step runs shielded from cancellation: cancelling it half-way would leave a
worker thread writing after the rollback. So a cancellation lands between steps, and the
rollback (shielded too) finishes before the cancellation goes on. A shield does not stop every
cancellation (the stdio server's is asyncio's own), so the rollback first waits, in its thread,
until every step the cancellation abandoned has returned: what such a step wrote is undone too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
import anyio.to_thread

from fsmcp import ErrorCode, ToolError, ToolResult

from . import touched

if TYPE_CHECKING:
    from fsmcp import ToolContext
    from fsmcp import Snapshot
    from pathlib import Path

    from .plan import Step

CONCURRENCY = 8
"""Most read-only steps of a parallel batch running at once."""

Outcome = ToolResult | ToolError | None
"""A step's result, its error, or None when it did not run."""


class Run:
    def __init__(self, ctx: ToolContext, steps: list[Step], *, transactional: bool, parallel: bool):
        self.ctx = ctx
        self.steps = steps
        self.transactional = transactional
        self.parallel = parallel
        self.outcomes: list[Outcome] = [None] * len(steps)
        self.saved: list[tuple[Step, Snapshot]] = []
        self.rolled_back = False
        self.rollback_failures: list[str] = []
        self.kept: list[str] = []
        """Paths the rollback left as another call wrote them after this batch's step had changed them."""
        self.stayed: dict[str, str] = {}
        """Paths the rollback left where the batch had moved a kept path's content: each holds what that path held."""
        self.kept_copies: dict[str, str] = {}
        """Paths the rollback did not put back, and where the copy of what each held before the batch is kept for good."""
        self._finished = 0

    @property
    def stopped_at(self) -> Step | None:
        """The failed step that ended the batch, if one did."""
        return next((s for s in self.steps if self._stops(s)), None)

    def _stops(self, step: Step) -> bool:
        return isinstance(self.outcomes[step.number - 1], ToolError) and not step.continue_on_error

    async def __call__(self) -> None:
        try:
            for group in self._groups():
                await anyio.lowlevel.checkpoint_if_cancelled()
                await self._run_group(group)
                if any(self._stops(s) for s in group):
                    break
            await anyio.lowlevel.checkpoint_if_cancelled()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._roll_back(settle=True)
            raise
        if self.stopped_at is not None:
            await self._roll_back()
        else:
            await anyio.to_thread.run_sync(self._discard)

    def _groups(self) -> list[list[Step]]:
        """Steps to run together: runs of consecutive read-only steps when parallel, else one by one."""
        groups: list[list[Step]] = []
        reads: list[Step] = []
        for step in self.steps:
            if self.parallel and step.read_only:
                reads.append(step)
                continue
            if reads:
                groups.append(reads)
                reads = []
            groups.append([step])
        if reads:
            groups.append(reads)
        return groups

    async def _run_group(self, group: list[Step]) -> None:
        if len(group) == 1:
            step = group[0]
            if self.transactional and not step.read_only:
                with anyio.CancelScope(shield=True):
                    await self._run(step)
            else:
                await self._run(step)
            return
        limiter = anyio.CapacityLimiter(CONCURRENCY)

        async def limited(step: Step) -> None:
            async with limiter:
                await self._run(step)

        async with anyio.create_task_group() as tg:
            for step in group:
                tg.start_soon(limited, step)

    async def _run(self, step: Step) -> None:
        outcome = None
        if self.transactional and not step.read_only:
            outcome = await self._save(step)
        if outcome is None:
            # Each step cuts its own output to its share, keeping its own "how to get the rest".
            share = max(1000, self.ctx.budget // len(self.steps))
            outcome = await self.ctx.run_tool(step.name, step.arguments, budget=share)
        self.outcomes[step.number - 1] = outcome
        self._finished += 1
        await self.ctx.aprogress(self._finished, len(self.steps), f"{step.name} (operation {step.number})")

    async def _save(self, step: Step) -> ToolError | None:
        """Save every path ``step`` may change; the error instead when that fails (the step is not run)."""
        try:
            paths = await touched.paths(step, self.ctx)
            snapshot = await anyio.to_thread.run_sync(self.ctx.fs.snapshot, paths)
        except ToolError as exc:
            return exc
        except OSError as exc:
            return ToolError(
                ErrorCode.INTERNAL_ERROR,
                f"could not save what {step.name} would change ({exc.strerror or exc}), so it was not run",
            )
        self.saved.append((step, snapshot))
        return None

    async def _roll_back(self, settle: bool = False) -> None:
        if not self.saved:
            return
        self.rollback_failures = await anyio.to_thread.run_sync(self._restore, settle)
        self.rolled_back = True

    def _restore(self, settle: bool = False) -> list[str]:
        if settle:
            # In this thread, not awaited before it: cancelled again, the rollback still waits.
            self.ctx.settle()
        failures = []
        # Each step's snapshot noted what the step left, under the step's locks; what someone else
        # changed since, in any of them, is left as they left it by every one.
        kept: set[Path] = set()
        for _, snapshot in self.saved:
            kept |= snapshot.changed()
        left: set[Path] = set()
        for step, snapshot in reversed(self.saved):
            try:
                snapshot.restore(kept)
            except OSError as exc:
                # Its copies stay in the temporary directory: the only place the old bytes still are.
                failures.append(f"operation {step.number} ({step.name}): {exc}")
            left.update(snapshot.kept)
            self.stayed.update({str(path): str(source) for path, source in snapshot.stayed.items()})
            self.kept_copies.update({str(path): str(copy) for path, copy in snapshot.kept_copies.items()})
        self.kept = sorted(str(path) for path in left | kept)
        return failures

    def _discard(self) -> None:
        for _, snapshot in self.saved:
            snapshot.discard()
