"""Glob filters shared by every tool that takes ``excludeGlobs`` or ``globs``."""

from __future__ import annotations

import re
import time
from typing import Annotated, Any

from pydantic import Field

from ..api.errors import ErrorCode, ToolError

ExcludeGlobs = Annotated[
    list[str],
    Field(
        default_factory=list,
        description="Names (node_modules) or, with '/', relative paths (src/gen/**).",
    ),
]
"""The ``excludeGlobs`` parameter of every tool that lists or searches, declared once for all of them."""

GLOB_LIMIT = 1000
"""How many patterns one glob may expand to (``{a,b}{c,d}`` is four): more is INVALID_PARAMS."""


_EXTGLOB_GROUP = re.compile(r"[+*?@!]\(")

MATCH_SECONDS = 2.0
"""How long one compiled set of globs may spend matching, over all the names of one call."""


def compile_globs(patterns: list[str], flags: int) -> Any:
    """A matcher (``.match(name)``) for ``patterns``, wcmatch syntax; a pattern whose braces expand
    past GLOB_LIMIT is refused. Extglob groups are matched under a time bound (GlobMatcher)."""
    from wcmatch import glob  # on first use: most calls take no globs
    from wcmatch._wcparse import PatternLimitException  # raised by glob.compile/translate, exported nowhere else

    try:
        if flags & glob.EXTGLOB and any(_EXTGLOB_GROUP.search(p) for p in patterns):
            include, exclude = glob.translate(patterns, flags=flags, limit=GLOB_LIMIT)
            return GlobMatcher(patterns, include, exclude)
        # Without extglob groups the translation backtracks little (tried: *a*a*a*a*a*a*a*ab on 200
        # letters, instant), and Python's re matches five times faster than regex with a timeout.
        return glob.compile(patterns, flags=flags, limit=GLOB_LIMIT)
    except PatternLimitException:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"a glob expands to more than {GLOB_LIMIT:,} patterns (each {{a,b}} doubles them); "
            "use fewer braces, or character classes ([ab]) and ** instead",
        ) from None


class GlobMatcher:
    """wcmatch's translation of globs, run by ``regex``, which can stop a match after a time.

    Python's ``re`` cannot: extglobs such as ``+(a|a)+(a|a)+(a|a)+(a|a)b`` backtrack for minutes
    on a 20-letter name, holding the interpreter. The time is counted over all the names one
    matcher sees, so a call is bounded whatever the number of names.
    """

    def __init__(self, patterns: list[str], include: list[Any], exclude: list[Any]):
        import regex

        self._patterns = patterns
        self._include = [regex.compile(p, regex.VERSION0) for p in include]
        self._exclude = [regex.compile(p, regex.VERSION0) for p in exclude]
        self._left = MATCH_SECONDS

    def match(self, name: str) -> bool:
        return any(self._full(p, name) for p in self._include) and not any(self._full(p, name) for p in self._exclude)

    def _full(self, pattern: Any, name: str) -> bool:
        start = time.monotonic()
        try:
            return pattern.fullmatch(name, timeout=max(self._left, 0.001), concurrent=True) is not None
        except TimeoutError:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"the globs {self._patterns!r} took more than {MATCH_SECONDS:g} s of matching and were stopped "
                "(repeated extglob groups such as +(a|aa)+(a|aa) backtrack without end on names that almost "
                "match); use * or ** instead of +(...)/*(...) groups, or fewer of them",
            ) from None
        finally:
            self._left -= time.monotonic() - start


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
