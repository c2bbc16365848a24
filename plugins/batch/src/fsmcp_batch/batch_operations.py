"""batch_operations: several tool calls in one, in order, optionally undone as a whole on failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ToolResult

from .plan import plan
from .report import failure, report
from .run import Run

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import BatchInput


async def batch_operations(args: BatchInput, ctx: ToolContext) -> ToolResult:
    run = Run(ctx, plan(args, ctx), transactional=args.transactional, parallel=args.parallel)
    if args.transactional:
        ctx.declare_transactional()  # a crash midway: the next start rolls the batch back from the journal
    await run()
    result = report(run, ctx.budget)
    if run.transactional and run.stopped_at is not None:
        raise failure(run, result)
    return result
