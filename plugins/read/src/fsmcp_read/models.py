"""The read tools' arguments (the wire schema every client sees, camelCase names) and outputs."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from fsmcp import ExcludeGlobs, ToolInput

_LINE_RANGE = re.compile(r"^\s*(\d+)\s*(?:([-:])\s*(\d*)\s*)?$")


def _line_range(value: Any) -> tuple[int, int | None]:
    """``"10-20"`` → (10, 20); ``"10-"`` → (10, None), to the end; ``"10"`` → (10, 10)."""
    match = _LINE_RANGE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"lineRange must look like '10-20' (or '10-' to the end), not {value!r}; or use startLine and endLine")
    first = int(match[1])
    if match[2] is None:
        return first, first
    return first, int(match[3]) if match[3] else None


class ReadFileInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"file": "path"}

    path: str
    encoding: Literal["auto", "utf-8", "base64", "hex"] = Field(
        "auto",
        description="auto: text or image/blob; base64/hex: exact bytes.",
    )
    start_line: int | None = Field(None, ge=1, description="First line, 1-based.")
    end_line: int | None = Field(None, ge=1, description="Last line, inclusive.")
    head: int | None = Field(None, ge=1, description="First N lines.")
    tail: int | None = Field(None, ge=1, description="Last N lines.")
    offset: int | None = Field(None, ge=0, description="Start byte; not with lines.")
    length: int | None = Field(None, ge=1, description="Bytes to read.")
    line_numbers: bool = Field(False, description="Prefix each line 'N | '.")
    max_bytes: int | None = Field(
        None, ge=1, description="A whole file over this: FILE_TOO_LARGE."
    )

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``lineRange: "a-b"`` / ``line_range`` (FileEditor) and ``range: {start, end, lines}``."""
        for key in ("lineRange", "line_range"):
            if key in data:
                first, last = _line_range(data.pop(key))
                data.setdefault("startLine", first)
                if last is not None:
                    data.setdefault("endLine", last)
        span = data.pop("range", None)
        if isinstance(span, dict):
            lines = span.get("lines")
            if isinstance(lines, dict):
                data.setdefault("startLine", lines.get("from"))
                data.setdefault("endLine", lines.get("to"))
            if "start" in span or "end" in span:
                start = span.get("start") or 0
                data.setdefault("offset", start)
                if isinstance(span.get("end"), int) and isinstance(start, int):
                    data.setdefault("length", span["end"] - start)
        elif span is not None:
            raise ValueError("range must be an object like {\"start\": 0, \"end\": 100}; or use offset and length")
        return data


class ReadMultipleInput(ToolInput):
    paths: list[str] = Field(min_length=1, max_length=50)


class ListDirectoryInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"directory": "path", "dir": "path", "excludePatterns": "excludeGlobs", "maxEntries": "maxResults"}

    path: str = "."
    recursive: bool = Field(False, description="Everything below, as relative paths.")
    max_results: int = Field(1000, ge=1, description="Most entries shown.")
    sizes: bool = Field(False, description="File sizes in bytes.")
    exclude_globs: ExcludeGlobs


class DirectoryTreeInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"directory": "path", "dir": "path", "excludePatterns": "excludeGlobs"}

    path: str = "."
    depth: int | None = Field(
        None, ge=0, description="As find -maxdepth (0: the root only)."
    )
    exclude_globs: ExcludeGlobs


class PathInput(ToolInput):
    path: str


class NoInput(ToolInput):
    pass


# Output models: the facts returned as structuredContent, beside the text. Tools whose text
# is their payload (file content, listings, trees) declare none, so nothing is sent twice.


class FileInfoOutput(BaseModel):
    path: str
    type: Literal["file", "directory", "symlink", "other"]
    size: int
    created: str
    modified: str
    accessed: str
    permissions: str
    target: str | None = None
    version: str


class AllowedDirectory(BaseModel):
    path: str
    access: Literal["read-write", "read-only"]


class AllowedDirectoriesOutput(BaseModel):
    directories: list[AllowedDirectory]
