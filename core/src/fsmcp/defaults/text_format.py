"""The default formatter, ``text``: plain text parts, binary as image or blob, errors as text."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from mcp import types

from ..budget import truncate
from ..errors import ToolError
from ..hooks import hookimpl
from ..results import Blob, Text, ToolResult

if TYPE_CHECKING:
    from ..config import Settings
    from ..tools import Tool

NAME = "text"


@hookimpl
def fsmcp_format_result(tool: Tool | None, outcome: ToolResult | ToolError, format: str, settings: Settings) -> types.CallToolResult | None:
    if format != NAME:
        return None
    if isinstance(outcome, ToolError):
        return types.CallToolResult(content=[types.TextContent(text=f"{outcome.code.value}: {outcome.message}")], is_error=True)
    return types.CallToolResult(content=content_blocks(outcome, settings.budget), structured_content=structured(tool, outcome))


def structured(tool: Tool | None, result: ToolResult) -> dict | None:
    """``structuredContent`` for a tool that declares an output model: its data, checked."""
    if tool is None or tool.output_model is None or result.data is None:
        return None
    return tool.output_model.model_validate(result.data).model_dump(mode="json", by_alias=True)


def content_blocks(result: ToolResult, budget: int) -> list[types.ContentBlock]:
    """The parts as MCP content, the text of all parts together held to ``budget``."""
    blocks: list[types.ContentBlock] = []
    left = budget
    for part in result.parts:
        if isinstance(part, Text):
            # A backstop: tools cut smartly themselves; this only stops a runaway result.
            text, _ = truncate(part.text, max(left, 200), "Ask for less: a narrower path, a range or a smaller limit.")
            left -= len(text)
            blocks.append(types.TextContent(text=text))
        elif isinstance(part, Blob):
            blocks.append(blob_block(part))
    return blocks


def blob_block(part: Blob) -> types.ContentBlock:
    data = base64.b64encode(part.data).decode("ascii")
    if part.mime_type.startswith("image/"):
        return types.ImageContent(data=data, mime_type=part.mime_type)
    if part.mime_type.startswith("audio/"):
        return types.AudioContent(data=data, mime_type=part.mime_type)
    return types.EmbeddedResource(
        resource=types.BlobResourceContents(uri=part.uri or "file:///", mime_type=part.mime_type, blob=data)
    )
