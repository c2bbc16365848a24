"""Checking a batch before anything runs: every operation names an offered tool, with valid arguments.

A batch with a typo in its fifth operation should not have run the first four, so every
operation is checked up front, and every problem is named at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from fsmcp import ErrorCode, ToolError, describe_invalid

from . import touched

if TYPE_CHECKING:
    from fsmcp import Tool, ToolContext, ToolInput

    from .models import BatchInput, Operation


@dataclass(frozen=True)
class Step:
    number: int
    """1-based, as the report numbers it."""
    tool: Tool
    arguments: dict[str, Any]
    args: ToolInput
    """The arguments as the tool's own model reads them (aliases resolved)."""
    continue_on_error: bool

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def read_only(self) -> bool:
        return self.tool.annotations.read_only


def plan(batch: BatchInput, ctx: ToolContext) -> list[Step]:
    steps: list[Step] = []
    problems: list[str] = []
    unknown = False
    for number, op in enumerate(batch.operations, 1):
        try:
            steps.append(_step(number, op, ctx, batch.transactional))
        except _Refused as exc:
            problems.append(f"operation {number} ({op.tool_name}): {exc}")
            unknown |= exc.unknown
    if problems:
        if unknown:
            offered = ", ".join(name for name in ctx.tools if name != ctx.tool.name)
            problems.append(f"this server offers: {offered}")
        raise ToolError(ErrorCode.INVALID_PARAMS, "nothing was run: " + "; ".join(problems))
    return steps


class _Refused(Exception):
    def __init__(self, message: str, *, unknown: bool = False):
        super().__init__(message)
        self.unknown = unknown


def _step(number: int, op: Operation, ctx: ToolContext, transactional: bool) -> Step:
    name = op.tool_name
    if name == ctx.tool.name:
        raise _Refused(f"{name} cannot run inside {name}; put its operations in this batch instead")
    tool = ctx.tools.get(name)
    if tool is None:
        raise _Refused(ctx.unknown_tool(name), unknown=True)
    try:
        args = tool.input_model.model_validate(op.arguments)
    except ValidationError as exc:
        raise _Refused(describe_invalid(tool, exc, op.arguments)) from None
    if transactional and not tool.annotations.read_only:
        reason = touched.unmappable(tool, args)
        if reason:
            raise _Refused(reason)
    return Step(number, tool, op.arguments, args, op.continue_on_error)


