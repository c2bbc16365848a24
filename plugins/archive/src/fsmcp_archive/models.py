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
        description="Files, directories and globs to put in the archive (absolute, or relative to the workspace). "
        "A directory is stored with everything in it; a glob (*, ?, [..], {a,b}, ** for any depth) takes what it matches.",
    )
    output: str = Field(description="The archive file to create.")
    format: Format | None = Field(
        None,
        description="zip, tar, tar.gz, tar.bz2 or tar.xz. Default: from the output's extension "
        "(.zip, .tar, .tar.gz/.tgz, .tar.bz2/.tbz2, .tar.xz/.txz), else zip.",
    )
    overwrite: bool = Field(False, description="Replace an existing output file instead of failing.")
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "output"


class ExtractInput(ToolInput):
    archive: str = Field(description="The archive to extract: zip, tar, tar.gz, tar.bz2 or tar.xz (recognised by content).")
    destination: str = Field(description="The directory to extract into; created when missing.")
    overwrite: bool = Field(
        False, description="Replace existing files and links that members would land on, instead of failing."
    )
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "destination"


class ListInput(ToolInput):
    archive: str = Field(description="The archive to list: zip, tar, tar.gz, tar.bz2 or tar.xz (recognised by content).")
    offset: int = Field(0, ge=0, description="Members to skip before listing: continue a listing the output budget cut short.")
