"""batch_operations' arguments: the operations, and the switches that say how to run them."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from fsmcp import ToolInput

MAX_OPERATIONS = 100

OPERATION_TYPES = {
    "read": "read_file",
    "write": "write_file",
    "copy": "copy_file",
    "move": "move_file",
    "delete": "delete_file",
    "append": "append_file",
}
"""The operation types other servers' batches use in place of a tool's name, and the tools they name."""


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _as_json(value: Any, kind: type) -> Any:
    """Some clients send an array or object argument as its JSON text (anthropics/claude-code#22394)."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, kind):
            return parsed
    return value


class Operation(ToolInput):
    # other servers' batches call the arguments `params`
    aliases: ClassVar[dict[str, str]] = {"params": "arguments"}

    tool: str | SkipJsonSchema[None] = Field(
        None,
        description="Any tool but batch_operations.",
        json_schema_extra=_drop_default,
    )
    type: Literal["read", "write", "copy", "move", "delete", "append"] | SkipJsonSchema[None] = Field(
        None,
        description="Or: the <type>_file tool.",
        json_schema_extra=_drop_default,
    )
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments."
    )
    continue_on_error: bool = Field(
        False, description="If this one fails, go on."
    )

    @field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, str) or value not in OPERATION_TYPES):
            raise ValueError(f"type {value!r} is not one of {', '.join(OPERATION_TYPES)}; to run any other tool, name it with tool")
        return value

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        for key in ("arguments", "params"):
            if key in data:
                data[key] = {} if data[key] is None else _as_json(data[key], dict)
        return data

    @model_validator(mode="after")
    def _one_tool(self) -> Operation:
        if (self.tool is None) == (self.type is None):
            raise ValueError("give either tool (a tool name) or type (read, write, copy, move, delete, append), not both or neither")
        return self

    @property
    def tool_name(self) -> str:
        return self.tool if self.tool is not None else OPERATION_TYPES[self.type or ""]


class BatchInput(ToolInput):
    operations: list[Operation] = Field(
        min_length=1,
        max_length=MAX_OPERATIONS,
    )
    transactional: bool = Field(
        False,
        description="All or nothing: a failure puts back what the batch changed; refuses run_command and run_shell.",
    )
    parallel: bool = Field(
        False, description="Run consecutive reads concurrently."
    )

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        if "operations" in data:
            data["operations"] = _as_json(data["operations"], list)
        return data
