"""batch_operations: several tool calls in one, in order, optionally undone as a whole on failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool, ToolResult

from .models import MAX_OPERATIONS, BatchInput

if TYPE_CHECKING:
    from fsmcp import ToolContext
    from fsmcp.config import Settings

DESCRIPTION = f"""Run up to {MAX_OPERATIONS} tool calls in one: operations [{{"tool": "write_file", "arguments": {{...}}}}, ...] \
in order (or seed-style {{"type": "read|write|copy|move|delete|append", "params": {{...}}}}). \
Every operation is checked first; a bad one means nothing runs. \
The batch stops at the first failure unless that operation has continueOnError: true; later ones are reported as skipped. \
transactional: true saves everything each operation may change and, when one fails, puts it all back byte for byte \
(tools that change files they do not name, such as run_command, are refused in a transactional batch). \
parallel: true runs consecutive read-only operations concurrently. \
Returns "[N] tool OK" and the tool's output, or "[N] tool ERROR CODE: message", per operation, then a summary; \
a transactional batch that stopped is an error led by the failed operation's code and the summary."""


async def batch_operations(args: BatchInput, ctx: ToolContext) -> ToolResult:
    from .plan import plan  # the batch machinery loads at the first batch
    from .report import failure, report
    from .run import Run

    run = Run(ctx, plan(args, ctx), transactional=args.transactional, parallel=args.parallel)
    await run()
    result = report(run, ctx.budget)
    if run.transactional and run.stopped_at is not None:
        raise failure(run, result)
    return result


READ_ONLY_NOTE = " The server is read-only: operations may use only the tools it offers, all of which read."


def tools_for(settings: Settings) -> list[Tool]:
    # Under read_only the batch still runs reads, so it stays, saying so (the host drops tools that only change).
    if settings.read_only:
        return [Tool("batch_operations", DESCRIPTION + READ_ONLY_NOTE, BatchInput, batch_operations, READ_ONLY, title="Run operations as a batch")]
    return [Tool("batch_operations", DESCRIPTION, BatchInput, batch_operations, DESTRUCTIVE, title="Run operations as a batch")]
