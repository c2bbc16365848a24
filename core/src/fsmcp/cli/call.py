"""``fsmcp call``: run one tool in process, as a client would see it, and print the result."""

from __future__ import annotations

import base64
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

import anyio

if TYPE_CHECKING:
    from ..run.host import Host

OK, TOOL_FAILED = 0, 1


class UsageError(Exception):
    """The call cannot be made as written (bad JSON, unknown tool); exit status 2."""


def parse_arguments(raw: str, stdin: TextIO) -> dict[str, Any]:
    """The tool's arguments: a JSON object, or ``-`` to read one from standard input."""
    text = stdin.read() if raw == "-" else raw
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"the arguments are not valid JSON ({exc}); give one object, such as '{{\"path\": \"notes.txt\"}}'") from None
    if not isinstance(value, dict):
        raise UsageError(f"the arguments must be a JSON object, not {type(value).__name__}; such as '{{\"path\": \"notes.txt\"}}'")
    return value


def call(host: Host, tool: str, arguments: dict[str, Any], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Run ``tool`` and print its result; returns the exit status.

    Success goes to ``out``. A failure goes to ``err`` in the text format and to ``out`` in
    any other format, whose document says itself that the call failed (``"ok": false``).
    """
    if tool not in host.tools:
        raise UsageError(host.unknown_tool(tool))
    result = anyio.run(host.runner.call, tool, arguments)
    failed = bool(result.get("isError"))
    stream = err if failed and host.settings.format == "text" else out
    text = "\n".join(describe(block) for block in result["content"])
    stream.write(text if text.endswith("\n") else text + "\n")
    return TOOL_FAILED if failed else OK


def describe(block: dict[str, Any]) -> str:
    """A content item as text: text as it is, anything binary as one line saying what it is."""
    kind = block.get("type")
    if kind == "text":
        return block["text"]
    if kind in ("image", "audio"):
        return f"[{kind}: {block['mimeType']}, {_size(block['data'])} bytes]"
    if kind == "resource":
        resource = block["resource"]
        if "text" in resource:
            return resource["text"]
        return f"[resource {resource['uri']}: {resource.get('mimeType') or 'application/octet-stream'}, {_size(resource['blob'])} bytes]"
    return f"[link: {block.get('uri')}]"


def _size(data: str) -> int:
    return len(base64.b64decode(data))
