"""run_shell: a command line run with /bin/sh -c in a writable root; nothing checks what it does."""

from __future__ import annotations

from fsmcp import Access, ErrorCode, ToolContext, ToolError, ToolResult

from .changes import run_viewed
from .models import RunShellInput
from .options import ShellOptions, checked_timeout
from .place import environment, search_path, why_read_only, working_directory
from .process import execute, progress_ticks
from .report import report

SHELL = "/bin/sh"


async def run_shell(args: RunShellInput, ctx: ToolContext) -> ToolResult:
    options = ShellOptions.load(ctx.options)
    cwd = working_directory(args.working_directory, Access.READ, ctx)
    if not ctx.roots.writable(cwd.root):
        raise ToolError(ErrorCode.READ_ONLY, f"run_shell can change anything, and {why_read_only(cwd, ctx)}; use run_command with a read-only command")
    timeout = checked_timeout(args.timeout, options)
    env = environment(options, search_path(options, ctx))
    viewed = await run_viewed(
        ctx,
        dry_run=args.dry_run,
        budget=ctx.budget // 2,
        run=lambda view: execute(
            ctx, [SHELL, "-c", args.command], program=SHELL, writes=True, network=options.allow_network, cwd=str(cwd.path), env=env, timeout=timeout,
            grace=options.kill_grace, cap=args.max_output_bytes, tick=progress_ticks(ctx, "the shell command", timeout), view=view,
        ),
    )
    return report(viewed, command=SHELL, args=["-c", args.command], cwd=str(cwd.path), timeout=timeout, grace=options.kill_grace, budget=ctx.budget)
