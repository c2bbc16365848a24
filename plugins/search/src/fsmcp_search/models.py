"""The search tools' arguments: the wire schema every client sees (camelCase names)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator

from fsmcp import ExcludeGlobs, ToolInput

MAX_CONTEXT_LINES = 50
MAX_RESULTS = 10_000

_IGNORED = "Also .gitignored files and .git."


def _one_or_many(value: Any) -> Any:
    # Models often send a single glob as a bare string; it means a list of one.
    return [value] if isinstance(value, str) else value


class SearchFilesInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"path": "directory", "dir": "directory", "pattern": "nameContains", "excludePatterns": "excludeGlobs"}

    directory: str | None = None
    name_contains: str = Field(
        min_length=1,
        description="Text in the name: literal, any case.",
    )
    exclude_globs: ExcludeGlobs
    include_ignored: bool = Field(False, description=_IGNORED)

    @field_validator("exclude_globs", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return _one_or_many(value)

    @field_validator("name_contains")
    @classmethod
    def _one_name(cls, value: str) -> str:
        if "/" in value:
            raise ValueError("nameContains is matched against single names, which never contain '/'; use glob_search to match paths")
        return value


class GlobSearchInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"path": "directory", "dir": "directory", "pattern": "globs", "excludePatterns": "excludeGlobs", "max": "maxResults"}

    directory: str | None = None
    globs: list[str] = Field(
        min_length=1,
        description="Relative to directory (*.py: its own files; **/*.py: any depth) or absolute.",
    )
    exclude_globs: ExcludeGlobs
    max_results: int = Field(1000, ge=0, description="Most files; 0: no limit.")
    include_ignored: bool = Field(False, description=_IGNORED)

    @field_validator("globs", "exclude_globs", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return _one_or_many(value)


class GrepFilesInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"pattern": "regex", "path": "directory", "dir": "directory", "excludePatterns": "excludeGlobs"}

    regex: str = Field(
        min_length=1,
        description="ECMAScript, per line; no lookaround or backreferences.",
    )
    directory: str | None = None
    globs: list[str] | None = Field(
        None,
        description="Names (*.py) or, with '/', paths under directory or absolute.",
    )
    exclude_globs: ExcludeGlobs
    case_insensitive: bool = Field(False, description="Ignore case (grep -i).")
    context_lines: int = Field(0, ge=0, le=MAX_CONTEXT_LINES, description="Lines around each match (grep -C).")
    max_results: int = Field(500, ge=1, le=MAX_RESULTS, description="Most matching lines in all.")
    include_ignored: bool = Field(False, description=_IGNORED)

    @field_validator("globs", "exclude_globs", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return _one_or_many(value)

    @field_validator("regex", mode="before")
    @classmethod
    def _regex_is_the_pattern(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("regex is the pattern itself (a string); the old boolean regex flag is gone, every search is a regex")
        return value
