"""Glob filters shared by every tool that takes ``excludeGlobs`` or ``globs``."""

from __future__ import annotations

from typing import Any

from .errors import ErrorCode, ToolError

GLOB_LIMIT = 1000
"""How many patterns one glob may expand to (``{a,b}{c,d}`` is four): more is INVALID_PARAMS."""


def compile_globs(patterns: list[str], flags: int) -> Any:
    """wcmatch's matcher for ``patterns``; a pattern whose braces expand past GLOB_LIMIT is refused."""
    from wcmatch import glob  # on first use: most calls take no globs
    from wcmatch._wcparse import PatternLimitException  # raised by glob.compile, exported nowhere else

    try:
        return glob.compile(patterns, flags=flags, limit=GLOB_LIMIT)
    except PatternLimitException:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"a glob expands to more than {GLOB_LIMIT:,} patterns (each {{a,b}} doubles them); "
            "use fewer braces, or character classes ([ab]) and ** instead",
        ) from None


class GlobFilter:
    """Matches paths relative to a walk's start.

    A pattern without ``/`` matches an entry's name at any depth (``node_modules``, ``*.log``),
    as in ``.gitignore``; a pattern with ``/`` matches the whole relative path (``src/**/*.py``).
    A directory that matches is pruned with everything under it.
    """

    def __init__(self, patterns: list[str] | None):
        patterns = [p.rstrip("/") for p in (patterns or []) if p.strip("/")]
        self.patterns = patterns
        names = [p for p in patterns if "/" not in p]
        paths = [p.lstrip("/") for p in patterns if "/" in p]
        from wcmatch import glob

        flags = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.EXTGLOB
        self._names = compile_globs(names, flags) if names else None
        self._paths = compile_globs(paths, flags) if paths else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if self._names is not None and self._names.match(name):
            return True
        return self._paths is not None and bool(self._paths.match(rel))
