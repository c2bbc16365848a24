"""The default formatter, ``text``: plain text parts, binary as image or blob, errors as text."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from ..api.errors import ToolError
from ..api.hooks import hookimpl
from ..api.tools import Blob, Text, ToolResult, truncate

if TYPE_CHECKING:
    from ..api.config import Settings
    from ..api.tools import Tool

NAME = "text"


@hookimpl
def fsmcp_format_result(tool: Tool | None, outcome: ToolResult | ToolError, format: str, settings: Settings) -> dict[str, Any] | None:
    if format != NAME:
        return None
    if isinstance(outcome, ToolError):
        return {"content": [text_block(f"{outcome.code.value}: {outcome.message}")], "isError": True}
    return call_result(content_blocks(outcome, settings.budget), structured(tool, outcome))


def call_result(content: list[dict[str, Any]], structured_content: dict[str, Any] | None) -> dict[str, Any]:
    """A successful ``CallToolResult`` as it goes on the wire."""
    # isError is optional in the protocol, but clients in the wild read it as present.
    result: dict[str, Any] = {"content": content, "isError": False}
    if structured_content is not None:
        result["structuredContent"] = structured_content
    return result


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def structured(tool: Tool | None, result: ToolResult) -> dict | None:
    """``structuredContent`` for a tool that declares an output model: its data, checked."""
    if tool is None or tool.output_model is None or result.data is None:
        return None
    # model_validate and model_dump, without their Python wrappers: this runs at every call.
    model = tool.output_model
    return model.__pydantic_serializer__.to_python(model.__pydantic_validator__.validate_python(result.data), mode="json", by_alias=True)


def content_blocks(result: ToolResult, budget: int) -> list[dict[str, Any]]:
    """The parts as MCP content, the text of all parts together held to ``budget``."""
    blocks: list[dict[str, Any]] = []
    left = budget
    for part in result.parts:
        if isinstance(part, Text):
            # A backstop: tools cut smartly themselves; this only stops a runaway result.
            text, limit = part.text, max(left, 200)
            if len(text) > limit:
                text, _ = truncate(text, limit, "Ask for less: a narrower path, a range or a smaller limit.")
            left -= len(text)
            blocks.append(text_block(text))
        elif isinstance(part, Blob):
            blocks.append(blob_block(part))
    return blocks


def blob_block(part: Blob) -> dict[str, Any]:
    data = base64.b64encode(part.data).decode("ascii")
    for kind in ("image", "audio"):
        if part.mime_type.startswith(f"{kind}/"):
            return {"type": kind, "data": data, "mimeType": part.mime_type}
    return {"type": "resource", "resource": {"uri": part.uri or "file:///", "mimeType": part.mime_type, "blob": data}}
