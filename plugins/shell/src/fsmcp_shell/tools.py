"""The shell tools as the host registers them, described from the operator's configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import RunCommandInput, RunShellInput
from .options import ShellOptions

if TYPE_CHECKING:
    from fsmcp.config import Settings

_OUTPUT = (
    "Output: 'exit_code: N', then 'stdout:' and 'stderr:' sections (a notice when a stream was cut); "
    "a non-zero exit code is the command's own result, not an error."
)


def tools_for(settings: Settings) -> list[Tool]:
    options = ShellOptions.load(settings.options("shell"))  # a wrong section stops the start (exit 2)
    only_reads = settings.read_only or options.all_read_only
    tools = [
        Tool(
            name="run_command",
            title="Run an allowed command",
            description=f"Run one allowed program directly, without a shell, e.g. {{\"command\": \"grep\", \"args\": [\"-rn\", \"TODO\", \"src\"]}}. "
            f"Allowed: {', '.join(sorted(options.allow))}. "
            "Arguments reach the program exactly as given: no globbing (*), no ~, and ; | > $(...) are ordinary characters. "
            "Before anything runs, every argument that can name a file is checked against the allowed directories (ACCESS_DENIED), "
            "and options that write files, run other programs or follow links out are refused (COMMAND_NOT_ALLOWED, naming the argument and why). "
            f"timeout in seconds (default 30, at most {options.max_timeout:g}); maxOutputBytes per stream (default 65536). " + _OUTPUT,
            input_model=RunCommandInput,
            function="fsmcp_shell.run:run_command",
            annotations=READ_ONLY if only_reads else DESTRUCTIVE,
            starts_programs=True,
        )
    ]
    if options.allow_shell:
        tools.append(
            Tool(
                name="run_shell",
                title="Run a shell command line",
                description="Run a command line with /bin/sh -c in a working directory inside the allowed roots: pipes, redirections, "
                "globs and variables work. Unlike run_command, nothing checks what it reads, writes or runs. "
                f"timeout in seconds (default 30, at most {options.max_timeout:g}); maxOutputBytes per stream (default 65536). " + _OUTPUT,
                input_model=RunShellInput,
                function="fsmcp_shell.run:run_shell",
                annotations=DESTRUCTIVE,
                starts_programs=True,
            )
        )
    return tools
