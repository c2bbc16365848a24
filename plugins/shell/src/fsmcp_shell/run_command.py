"""run_command: every check, in order, then the process, then the report.

Nothing is spawned until every check has passed: the name, the allowlist, the working
directory, the argument rules and every path an argument can name.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Awaitable

import anyio

from fsmcp import Access, ErrorCode, ProgramView, ResolvedPath, ToolContext, ToolError, ToolResult, start_program

from .argv import Refused, parse
from .changes import Viewed, run_viewed
from .models import RunCommandInput
from .options import ShellOptions, checked_timeout
from .place import check_paths, environment, locate, not_installed, search_path, why_read_only, working_directory
from .process import Finished, execute, progress_ticks
from .report import report
from .specs import SPECS, UNKNOWN

_sandbox_support: dict[str, bool] = {}
_PROBE_SECONDS = 30


async def run_command(args: RunCommandInput, ctx: ToolContext) -> ToolResult:
    options = ShellOptions.load(ctx.options)
    command = args.command
    _check_name(command, options)
    read_only = options.is_read_only(command)
    cwd = _cwd(args.working_directory, read_only, command, options, ctx)
    spec = SPECS.get(command, UNKNOWN)
    try:
        parsed = parse(spec, args.args)
    except Refused as refused:
        raise ToolError(
            ErrorCode.COMMAND_NOT_ALLOWED,
            f"{command} argument {refused.argument!r} is refused: {refused}. Nothing was run",
            {"argument": refused.argument},
        ) from None
    # A command that may write gets write access checked for every path it names.
    check_paths(parsed.paths, cwd, Access.READ if read_only else Access.WRITE, ctx, command)
    timeout = checked_timeout(args.timeout, options)
    path = search_path(options, ctx)
    env = environment(options, path)
    if spec.sandboxed:
        # --sandbox first: GNU sed compiles each -e as it meets it, so one before the flag escapes it.
        program = await _sandboxed(command, spec.sandboxed, path, env, options, ctx)
        argv = [spec.sandboxed, "--sandbox", *parsed.added, *args.args]
    else:
        program = locate(command, path, ctx)
        argv = [command, *parsed.added, *args.args]

    def run(view: ProgramView | None) -> Awaitable[Finished]:
        return execute(
            ctx, argv, program=program, writes=not read_only, network=options.allow_network, cwd=str(cwd.path), env=env, timeout=timeout,
            grace=options.kill_grace, cap=args.max_output_bytes, tick=progress_ticks(ctx, command, timeout), view=view,
        )

    if read_only:  # it writes nothing, over no view: nothing to record, nothing to preview
        viewed = Viewed(await run(None), None, None, False)
    else:
        viewed = await run_viewed(ctx, dry_run=getattr(args, "dry_run", False), budget=ctx.budget // 2, run=run)
    return report(viewed, command=command, args=args.args, cwd=str(cwd.path), timeout=timeout, grace=options.kill_grace, budget=ctx.budget)


def _check_name(command: str, options: ShellOptions) -> None:
    allowed = f"Allowed commands: {', '.join(sorted(options.allow)) or '(none)'}"
    if any(c.isspace() for c in command):
        words = command.split() or [""]
        example = json.dumps({"command": words[0], "args": words[1:]})
        raise ToolError(ErrorCode.INVALID_PARAMS, f"command is one program name; put its arguments in args, one string each: {example}. {allowed}")
    if "/" in command or command in (".", ".."):
        raise ToolError(ErrorCode.COMMAND_NOT_ALLOWED, f"{command!r} is a path; give a bare command name, found on the server's PATH. {allowed}")
    if command not in options.allow:
        raise ToolError(ErrorCode.COMMAND_NOT_ALLOWED, f"{command} is not an allowed command. {allowed}", {"allowed": sorted(options.allow)})


def _cwd(raw: str | None, read_only: bool, command: str, options: ShellOptions, ctx: ToolContext) -> ResolvedPath:
    cwd = working_directory(raw, Access.READ, ctx)
    if read_only:
        return cwd
    if not ctx.roots.writable(cwd.root):
        usable = sorted(c for c in options.allow if options.is_read_only(c))
        raise ToolError(
            ErrorCode.READ_ONLY,
            f"{command} is not a known read-only command, and {why_read_only(cwd, ctx)}; "
            f"here only read-only commands run: {', '.join(usable) or '(none)'}",
        )
    return ctx.fs.resolve(cwd, Access.WRITE)


async def _sandboxed(command: str, name: str, path: str, env: dict[str, str], options: ShellOptions, ctx: ToolContext) -> str:
    """The file of ``name``, which runs ``command`` with ``--sandbox``; else the command is refused."""
    why = not_installed(name, path)
    if why is None:
        program = locate(name, path, ctx)
        if await _has_sandbox(ctx, program, env):
            return program
        why = f"{program} does not accept --sandbox"
    others = sorted(c for c in options.allow if c not in SPECS or not SPECS[c].sandboxed)
    raise ToolError(
        ErrorCode.COMMAND_NOT_ALLOWED,
        f"{command} runs only as {name} --sandbox, and {why}; nothing was run. Commands that run here: {', '.join(others) or '(none)'}",
    )


async def _has_sandbox(ctx: ToolContext, program: str, env: dict[str, str]) -> bool:
    """Whether ``program --sandbox`` is understood (GNU sed 4.3 and later, gawk; not mawk, busybox, BSD sed).

    Only a finished answer is kept: a probe cut short by a slow machine is asked again next time.
    """
    if program not in _sandbox_support:
        cwd = str(ctx.roots.workspace)
        try:
            with anyio.fail_after(_PROBE_SECONDS):
                probe = await start_program(
                    ctx, [program, "--sandbox", "--version"], executable=program, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                try:
                    await probe.wait()
                finally:
                    await probe.aclose()
        except TimeoutError:
            raise ToolError(
                ErrorCode.TIMEOUT, f"{program} --sandbox --version did not finish within {_PROBE_SECONDS} s, so whether it sandboxes is not known; nothing was run, try again"
            ) from None
        except OSError:
            _sandbox_support[program] = False
        else:
            _sandbox_support[program] = probe.returncode == 0
    return _sandbox_support[program]
