"""The ``json`` formatter: an envelope, ``{"ok":true,"data":…}`` or ``{"ok":false,"error":…}``.

For scripts and clients that parse results: ``content[0].text`` is one JSON document. Binary
parts follow it as image or resource items, never inside the JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.errors import ToolError
from ..api.jsontext import dumps
from ..api.hooks import hookimpl
from ..api.tools import Blob, Text, ToolResult
from .text_format import blob_block, call_result, structured, text_block

if TYPE_CHECKING:
    from ..api.config import Settings
    from ..api.tools import Tool

NAME = "json"


@hookimpl
def fsmcp_format_result(tool: Tool | None, outcome: ToolResult | ToolError, format: str, settings: Settings) -> dict[str, Any] | None:
    if format != NAME:
        return None
    if isinstance(outcome, ToolError):
        envelope = {"ok": False, "error": {"code": outcome.code.value, "message": outcome.message, "details": outcome.details}}
        return {"content": [text_block(_dumps(envelope))], "isError": True}
    document = _dumps({"ok": True, "data": _data(outcome)})
    if len(document) > settings.budget:
        # The data is larger than a result may be: send the tool's own (already cut) text instead.
        text = "\n".join(p.text for p in outcome.parts if isinstance(p, Text))[: settings.budget - 200]
        document = _dumps({"ok": True, "data": {"text": text, "truncated": True}})
    blocks = [text_block(document), *(blob_block(p) for p in outcome.parts if isinstance(p, Blob))]
    return call_result(blocks, structured(tool, outcome))


def _data(result: ToolResult) -> Any:
    if result.data is not None:
        return result.data
    return {"text": "\n".join(p.text for p in result.parts if isinstance(p, Text))}


def _dumps(value: Any) -> str:
    return dumps(value)
