"""Glob filters shared by every tool that takes ``excludeGlobs`` or ``globs``."""

from __future__ import annotations


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
        from wcmatch import glob  # on first use: most calls take no globs

        flags = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.EXTGLOB
        self._names = glob.compile(names, flags=flags) if names else None
        self._paths = glob.compile(paths, flags=flags) if paths else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if self._names is not None and self._names.match(name):
            return True
        return self._paths is not None and bool(self._paths.match(rel))
