"""batch_operations: several tool calls in one, in order, optionally undone as a whole on failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool, ToolResult

from .models import MAX_OPERATIONS, BatchInput

if TYPE_CHECKING:
    from fsmcp import ToolContext
    from fsmcp.config import Settings

DESCRIPTION = """Several tool calls in one, in order, all checked first; the first failure stops the rest."""


async def batch_operations(args: BatchInput, ctx: ToolContext) -> ToolResult:
    from .plan import plan  # the batch machinery loads at the first batch
    from .report import failure, report
    from .run import Run

    run = Run(ctx, plan(args, ctx), transactional=args.transactional, parallel=args.parallel)
    if args.transactional and ctx.change is not None:
        ctx.change.transactional = True  # a crash midway: the next start rolls the batch back from the journal
    await run()
    result = report(run, ctx.budget)
    if run.transactional and run.stopped_at is not None:
        raise failure(run, result)
    return result


READ_ONLY_NOTE = " The server is read-only: every tool it offers only reads."


def tools_for(settings: Settings) -> list[Tool]:
    # Under read_only the batch still runs reads, so it stays, saying so (the host drops tools that only change).
    if settings.read_only:
        return [Tool("batch_operations", DESCRIPTION + READ_ONLY_NOTE, BatchInput, batch_operations, READ_ONLY)]
    return [Tool("batch_operations", DESCRIPTION, BatchInput, batch_operations, DESTRUCTIVE)]
