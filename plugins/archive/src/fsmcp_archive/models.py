"""The argument models of the archive tools (snake_case here, camelCase on the wire)."""

from __future__ import annotations

from typing import ClassVar, Literal

from fsmcp import ExpectedVersion, ToolInput
from pydantic import Field

Format = Literal["zip", "tar", "tar.gz", "tar.bz2", "tar.xz"]


class CompressInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"files": "paths"}

    paths: list[str] = Field(
        min_length=1,
        description="Files, directories (whole, under their name) and globs.",
    )
    output: str
    format: Format | None = Field(
        None,
        description="Default: by output's extension, else zip.",
    )
    overwrite: bool = Field(False, description="Replace an existing output.")
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "output"


class ExtractInput(ToolInput):
    archive: str
    destination: str = Field(description="Created when missing.")
    overwrite: bool = Field(
        False, description="Replace files and links members land on."
    )
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "destination"


class ListInput(ToolInput):
    archive: str
    offset: int = Field(0, ge=0, description="Members to skip, to go on after a cut.")
