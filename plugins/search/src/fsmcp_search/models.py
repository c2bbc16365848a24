"""The search tools' arguments: the wire schema every client sees (camelCase names)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from fsmcp import ToolInput

MAX_CONTEXT_LINES = 50
MAX_RESULTS = 10_000

_EXCLUDE = "Globs of paths to leave out. Without '/' a glob matches a file or directory name at any depth (node_modules, *.min.js); with '/' it matches the path relative to the directory (src/gen/**). A matching directory is skipped with everything under it."
_DIRECTORY = "Directory to search recursively (default: the workspace); relative globs are anchored to it."
_IGNORED = "Also search what .gitignore files (and .git/info/exclude) leave out, and the .git directory itself."


def _one_or_many(value: Any) -> Any:
    # Models often send a single glob as a bare string; it means a list of one.
    return [value] if isinstance(value, str) else value


class SearchFilesInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"path": "directory", "pattern": "nameContains", "excludePatterns": "excludeGlobs"}

    directory: str | None = Field(None, description=_DIRECTORY)
    name_contains: str = Field(
        min_length=1,
        description="Literal text (not a glob, not a regex) looked for, case-insensitively, in each file and directory name.",
    )
    exclude_globs: list[str] = Field(default_factory=list, description=_EXCLUDE)
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
    aliases: ClassVar[dict[str, str]] = {"path": "directory", "pattern": "globs", "excludePatterns": "excludeGlobs", "max": "maxResults"}

    directory: str | None = Field(None, description=_DIRECTORY)
    globs: list[str] = Field(
        min_length=1,
        description="File globs: ** (any depth), * and ? (within a name), {a,b}, [abc]. A relative glob matches the path relative to directory: "
        "*.py the directory's own, **/*.py any depth, src/**/*.ts; an absolute glob (/srv/app/*.py) is used as given.",
    )
    exclude_globs: list[str] = Field(default_factory=list, description=_EXCLUDE)
    max_results: int = Field(1000, ge=0, description="Most files to list (0: no limit); a notice says how many more there are.")
    include_ignored: bool = Field(False, description=_IGNORED)

    @field_validator("globs", "exclude_globs", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return _one_or_many(value)


class GrepFilesInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"path": "directory", "excludePatterns": "excludeGlobs"}

    regex: str = Field(
        min_length=1,
        description="ECMAScript (JavaScript) regex searched for in file contents, one line at a time. "
        "Escape metacharacters (\\. \\* \\() to search for literal text. Lookaround and backreferences are not supported.",
    )
    directory: str | None = Field(None, description=_DIRECTORY)
    globs: list[str] | None = Field(
        None,
        description="Files to search. A relative glob matches the path relative to directory (or to the workspace when directory is omitted): "
        "*.py the directory's own, **/*.py any depth, src/**/*.ts. An absolute glob is used as given.",
    )
    exclude_globs: list[str] = Field(default_factory=list, description=_EXCLUDE)
    case_insensitive: bool = Field(False, description="Match letters regardless of case (grep -i).")
    context_lines: int = Field(0, ge=0, le=MAX_CONTEXT_LINES, description="Lines shown before and after each match (grep -C), at most 50.")
    max_results: int = Field(500, ge=1, le=MAX_RESULTS, description="Most matching lines to return, in all files together (at most 10000).")
    include_ignored: bool = Field(False, description=_IGNORED)

    @field_validator("globs", "exclude_globs", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return _one_or_many(value)

    @model_validator(mode="before")
    @classmethod
    def _regex_is_the_pattern(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("regex"), bool):
            raise ValueError("regex is the pattern itself (a string); the old boolean regex flag is gone, every search is a regex")
        return data

    @model_validator(mode="after")
    def _somewhere(self) -> GrepFilesInput:
        if self.directory is None and not self.globs:
            raise ValueError("give directory, globs, or both, to say which files to search")
        return self
