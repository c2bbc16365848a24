"""The shell tools' arguments: the wire schema every client sees (camelCase names)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator

from fsmcp import ToolInput

from .report import MAX_OUTPUT_BYTES

MAX_ARGS = 256
MAX_ARG_CHARS = 8192

_TIMEOUT = "Seconds, then killed."
_MAX_OUTPUT = "Bytes kept of stdout and of stderr each."
_DRY_RUN = "Only report what it would change (a diff)."


class _Limits(ToolInput):
    """Other servers' names for the working directory (``cwd``) and the timeout (``timeoutMs``),
    which both tools accept.

    Each tool declares its own fields so that the schema lists the command first.
    """

    aliases: ClassVar[dict[str, str]] = {"cwd": "workingDirectory"}

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        # timeoutMs is in milliseconds; ours is in seconds.
        if "timeoutMs" in data:
            value = data.pop("timeoutMs")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = value / 1000
            data.setdefault("timeout", value)
        return data


class RunCommandInput(_Limits):
    command: str = Field(
        min_length=1,
        description="A bare name: grep, not /usr/bin/grep or 'grep -n x'.",
    )
    args: list[str] = Field(
        default_factory=list,
        max_length=MAX_ARGS,
        description="As they are: no quoting, globs, ~, $VAR, | or >.",
    )
    working_directory: str | None = None
    timeout: float = Field(30, gt=0, description=_TIMEOUT)
    max_output_bytes: int = Field(65536, ge=1, le=MAX_OUTPUT_BYTES, description=_MAX_OUTPUT)

    @field_validator("args", mode="before")
    @classmethod
    def _a_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError('args is a list with one string per argument, e.g. ["-n", "TODO", "app.py"]; nothing splits a string into arguments')
        return value

    @field_validator("args")
    @classmethod
    def _passable(cls, value: list[str]) -> list[str]:
        for arg in value:
            _receivable(arg, "an argument")
            if len(arg) > MAX_ARG_CHARS:
                raise ValueError(f"an argument is {len(arg):,} characters long; the limit is {MAX_ARG_CHARS:,}")
        return value


class WritingRunCommandInput(RunCommandInput):
    """run_command's arguments where a command that writes is allowed: it may be previewed."""

    dry_run: bool = Field(False, description=_DRY_RUN)


class RunShellInput(_Limits):
    command: str = Field(min_length=1, description="Pipes, redirections, globs and variables work.")
    working_directory: str | None = None
    timeout: float = Field(30, gt=0, description=_TIMEOUT)
    max_output_bytes: int = Field(65536, ge=1, le=MAX_OUTPUT_BYTES, description=_MAX_OUTPUT)
    dry_run: bool = Field(False, description=_DRY_RUN)

    @field_validator("command")
    @classmethod
    def _passable(cls, value: str) -> str:
        _receivable(value, "the command")
        return value


def _receivable(text: str, what: str) -> None:
    if "\x00" in text:
        raise ValueError(f"{what} holds a NUL byte, which no program can receive")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # JSON can carry a lone surrogate; no argument vector can.
        raise ValueError(f"{what} holds a lone surrogate (\\u{ord(text[exc.start]):04x}), which no program can receive") from None


class Changes(BaseModel):
    created: list[str]
    modified: list[str]
    deleted: list[str]


class RunOutput(BaseModel):
    """The facts of a run; its output is in the text."""

    exitCode: int | None
    signal: str | None
    timedOut: bool
    changes: Changes | None = Field(None, description="None: a read-only command, or not recorded.")
    changeId: int | None = Field(None, description="For undo_change.")
    conflicts: list[str] = []
    refused: list[str] = []
