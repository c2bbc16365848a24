"""What a tool returns: typed parts that a formatter turns into MCP content."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Blob:
    """Binary content. Formatters send ``image/*`` as an image and anything else as a resource."""

    data: bytes
    mime_type: str
    uri: str | None = None


Part = Text | Blob


@dataclass
class ToolResult:
    """A tool's answer: the parts the model reads and, optionally, the same facts as data.

    ``data`` is what the json formatter puts under ``"data"`` and what becomes
    ``structuredContent`` for tools that declare an output model; the text parts are what the
    text formatter sends.
    """

    parts: list[Part] = field(default_factory=list)
    data: Any = None

    @classmethod
    def text(cls, text: str, data: Any = None) -> ToolResult:
        return cls([Text(text)], data)
