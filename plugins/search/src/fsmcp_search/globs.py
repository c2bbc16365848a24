"""Include and exclude globs: what a file must match, and what ripgrep can pre-filter for us.

wcmatch decides every match. ripgrep is only told what narrows its walk without changing the
answer: the name part of an include glob (as a file type, which unlike ``-g`` never overrides
``.gitignore``), a depth limit, and the exclude globs it reads the same way we do.
"""

from __future__ import annotations

import re

from wcmatch import glob

from fsmcp import GlobFilter, compile_globs

FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.EXTGLOB
_MAGIC = re.compile(r"[*?\[\]{}()!@+\\]")
# What both wcmatch and ripgrep's globset read alike: no escapes, no extglob, plain [...] sets.
_PORTABLE = re.compile(r"(?:[^\\()\[\]/:]|\[[^\[\]/:\\]+\])+")
_CASE_SENSITIVE = not glob.globmatch("A", "a", flags=FLAGS)


def has_magic(part: str) -> bool:
    return bool(_MAGIC.search(part))


def _braces_cross_slash(pattern: str) -> bool:
    depth = 0
    for c in pattern:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == "/" and depth:
            return True
    return False


class Include:
    """One include glob: files under ``base`` whose path relative to it matches ``pattern``."""

    def __init__(self, base: str, pattern: str):
        self.base = base.rstrip("/") or "/"
        self.pattern = pattern
        self._prefix = self.base if self.base == "/" else self.base + "/"
        self._matcher = compile_globs([pattern], FLAGS)

    def matches(self, path: str) -> bool:
        return path.startswith(self._prefix) and bool(self._matcher.match(path[len(self._prefix) :]))

    def name_glob(self) -> str | None:
        """The glob a matching file's name must match, when ripgrep can check it exactly."""
        if not _CASE_SENSITIVE or _braces_cross_slash(self.pattern):
            return None
        last = self.pattern.rsplit("/", 1)[-1]
        return last if last != "**" and _PORTABLE.fullmatch(last) else None

    def depth(self) -> int | None:
        """How many levels below ``base`` a match lies at most (None: any)."""
        if "**" in self.pattern or _braces_cross_slash(self.pattern):
            return None
        return self.pattern.count("/") + 1


class Excludes:
    """``excludeGlobs`` (core's GlobFilter rules) relative to the search's anchor directory.

    A glob that spells out a path inside the anchor (``/srv/app/build``) is made relative to
    it; any other leading ``/`` anchors to the directory, as in ``.gitignore``.
    """

    def __init__(self, patterns: list[str], anchor: str):
        self._prefix = anchor.rstrip("/") + "/"
        self._filter = GlobFilter([p[len(self._prefix) :] if p.startswith(self._prefix) else p for p in patterns])

    def __bool__(self) -> bool:
        return bool(self._filter)

    def excludes(self, path: str) -> bool:
        """True when ``path`` or a directory above it (up to the anchor) matches."""
        if not self._filter:
            return False
        rel = path[len(self._prefix) :] if path.startswith(self._prefix) else path.lstrip("/")
        cut = rel.find("/")
        while cut != -1:
            if self._filter.matches(rel[:cut]):
                return True
            cut = rel.find("/", cut + 1)
        return self._filter.matches(rel)

    def ripgrep_globs(self, *, paths_inside_anchor: bool) -> list[str]:
        # ripgrep anchors a glob with '/' at its working directory (the anchor); a name glob
        # matches at any depth, as GlobFilter's does.
        out = []
        for pattern in self._filter.patterns:
            if not _PORTABLE.fullmatch(pattern.replace("/", "")):
                continue
            if "/" in pattern:
                if not paths_inside_anchor:
                    continue
                pattern = pattern.lstrip("/")
            out.append("!" + pattern)
        return out
