"""The shell tools as the host registers them, described from the operator's configuration."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fsmcp import DESTRUCTIVE, READ_ONLY, ProgramView, Tool

from .models import RunCommandInput, RunOutput, RunShellInput, WritingRunCommandInput
from .options import ShellOptions
from .place import not_installed, operator_path
from .specs import SPECS

if TYPE_CHECKING:
    from fsmcp import Settings

_OUTPUT = "A non-zero exit is a result."


def tools_for(settings: Settings) -> list[Tool]:
    options = ShellOptions.load(settings.options("shell"))  # a wrong section stops the start (exit 2)
    only_reads = settings.read_only or options.all_read_only
    missing = _without_sandbox(options)
    tools = [
        Tool(
            name="run_command",
            description="Run an allowed program, no shell: "
            f"{', '.join(sorted(set(options.allow) - missing)) or '(none)'}. "
            "Refused: paths outside the allowed directories, options that write, run programs or follow links "
            f"out. timeout at most {options.max_timeout:g}. " + _OUTPUT,
            # Only a command that writes has changes to report or preview.
            input_model=RunCommandInput if only_reads else WritingRunCommandInput,
            output_model=None if only_reads else RunOutput,
            function="fsmcp_shell.run_command:run_command",
            annotations=READ_ONLY if only_reads else DESTRUCTIVE,
            starts_programs=True,
            long=True,
        )
    ]
    if options.allow_shell:
        tools.append(
            Tool(
                name="run_shell",
                description="Run a command line with /bin/sh -c, in a directory inside the allowed roots. Unlike run_command, "
                f"nothing checks what it reads, writes or runs. timeout at most {options.max_timeout:g}. " + _OUTPUT,
                input_model=RunShellInput,
                output_model=RunOutput,
                function="fsmcp_shell.run_shell:run_shell",
                annotations=DESTRUCTIVE,
                starts_programs=True,
                long=True,
            )
        )
    return _undoable(tools, options, settings)


def _undoable(tools: list[Tool], options: ShellOptions, settings: Settings) -> list[Tool]:
    """With ``require_undo``, the tools whose programs could change files only where their changes can be undone."""
    if not options.require_undo or (why := ProgramView.unavailable(settings.sandbox)) is None:
        return tools
    kept = [t for t in tools if t.name == "run_command" and (settings.read_only or options.all_read_only)]
    withheld = [t.name for t in tools if t not in kept]
    logging.getLogger(__name__).warning(
        f"{' and '.join(withheld)} {'are' if len(withheld) > 1 else 'is'} not offered: require_undo = true, and what a program "
        f"changes cannot be undone here ({why}); run_command stays offered when every allowed command only reads"
    )
    return kept


def _without_sandbox(options: ShellOptions) -> set[str]:
    """The allowed commands whose sandboxing program is not installed, each said once on stderr.

    Whether an installed one accepts --sandbox is asked at the first call (it takes starting it).
    """
    missing: dict[str, list[str]] = {}
    path = operator_path(options)
    for command in sorted(options.allow):
        name = SPECS[command].sandboxed if command in SPECS else None
        if name and not_installed(name, path):
            missing.setdefault(name, []).append(command)
    for name, commands in missing.items():
        they = "they run" if len(commands) > 1 else "it runs"
        logging.getLogger(__name__).warning(
            f"{', '.join(commands)} {'are' if len(commands) > 1 else 'is'} not offered: {they} only as {name} --sandbox, "
            f"and {not_installed(name, path)}; install {name} to offer {'them' if len(commands) > 1 else 'it'}"
        )
    return {command for commands in missing.values() for command in commands}
