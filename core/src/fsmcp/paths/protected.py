"""Protected names: gitignore-style globs matched against paths relative to a root.

The set every tool and every program the server starts must keep away from (``.env``, private
keys, credentials), as the ``fsmcp_protected_globs`` implementations list it for one root. The
rules are docs/hooks.md's (``fsmcp_protected_globs``); as git cannot re-include a file of an
ignored directory, ``!`` cannot undo a matched directory's protection for a child.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def fold(text: str) -> str:
    """``text`` as the matcher compares it: NFKC, case-folded, NFKC again (folding can denormalise)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def protected_note(verb: str) -> str:
    """Why a tool that finds files itself left a protected one out: ``verb`` is what no tool does
    to it (``"reads"``, ``"writes"``). One sentence for every tool, worded by the host."""
    return f"protected (the secrets policy): no tool {verb} it"


def lines_withheld(what: str) -> str:
    """What a tool that may change a protected file (``allow_write``) says in place of ``what``
    would have shown of its lines (``"The diff"``, ``"The closest text"``): the file may be
    written, never read, and a diff, a hint or a failed hunk would read it."""
    return f"{what} is not shown: the file is protected by the secrets policy, and no tool shows its lines"


DECIDED = 65536
"""Directories' answers remembered per set of globs, at most: about 10 MB of the longest paths."""


@dataclass(frozen=True)
class _Rule:
    negated: bool
    anchored: bool
    regex: re.Pattern[str]
    glob: str


class ProtectedNames:
    """A compiled set of protected globs; ``matches(relpath)`` for a path relative to its root."""

    def __init__(self, globs: Sequence[str]):
        self.globs: tuple[str, ...] = tuple(globs)
        self._rules = [rule for g in self.globs if (rule := _compile(g)) is not None]
        self._decided: dict[str, bool] = {}
        """Each folded directory's answer, its directories' included: every call checks the same
        few directories again, and a walk asks a path just after its directory. Files are
        answered each time (the two expressions below answer most at once): remembered, a
        program's 100,000 new files would hold their paths in memory until the cache fills."""
        self._any_name = _union(r for r in self._rules if not r.negated and not r.anchored)
        self._any_path = _union(r for r in self._rules if not r.negated and r.anchored)
        """What some rule protects, in one expression each: most names meet none, and are answered by it."""

    def __bool__(self) -> bool:
        return any(not r.negated for r in self._rules)

    def __repr__(self) -> str:
        return f"ProtectedNames({list(self.globs)!r})"

    def matches(self, relpath: str) -> bool:
        """Whether ``relpath`` (``/``-separated, relative to the root) or a directory above it is protected."""
        if not self._rules:
            return False
        path = "/".join(p for p in fold(relpath).split("/") if p not in ("", "."))
        # Up to the nearest directory already answered, then down again deciding each level: a
        # path costs its own length, not its length times its depth (a 1,000-level tree).
        ends: list[int] = []
        end = path.rfind("/")
        while end > 0 and (decided := self._decided.get(path[:end])) is None:
            ends.append(end)
            end = path.rfind("/", 0, end)
        if end <= 0:
            decided = False
        if len(self._decided) + len(ends) > DECIDED:
            self._decided.clear()
        for end in reversed(ends):
            here = path[:end]
            decided = self._decided[here] = decided or self._decide(here, here[here.rfind("/") + 1 :])
        return decided or self.protects(path)

    def protects(self, relpath: str) -> bool:
        """Whether ``relpath`` is protected by its own name or path, its directories not asked: for a
        walk that does not enter a protected directory. Nothing is remembered."""
        path = fold(relpath)
        name = path.rpartition("/")[2]
        if (self._any_name is None or not self._any_name.fullmatch(name)) and (self._any_path is None or not self._any_path.fullmatch(path)):
            return False
        return self._decide(path, name)

    def _decide(self, path: str, name: str) -> bool:
        protected = False
        for rule in self._rules:
            if protected == (not rule.negated):
                continue  # this rule cannot change the answer so far
            if rule.regex.fullmatch(path if rule.anchored else name):
                protected = not rule.negated
        return protected

    def rg_globs(self) -> list[str]:
        """Arguments for ripgrep that leave the protected files out of a search (``--iglob !GLOB`` pairs).

        Never more than the protected files: a rule that a later ``!`` rule may re-include part of
        (``.env.*`` before ``!.env.example``) is not passed at all, since a positive ripgrep glob
        would narrow the search to the re-included names alone; ripgrep then reads those files, and
        what they hold is hidden by the program's masks and left out by the caller's check with
        :meth:`matches`, which it must make anyway (ripgrep folds case only, not Unicode).
        """
        args: list[str] = []
        for n, rule in enumerate(self._rules):
            if rule.negated or any(later.negated and _overlap(rule, later) for later in self._rules[n + 1 :]):
                continue
            glob = rule.glob if not rule.anchored or rule.glob.startswith("**/") else "/" + rule.glob
            args += ["--iglob", "!" + glob]
        return args


def _overlap(a: _Rule, b: _Rule) -> bool:
    """Whether some path may match both rules (True when unsure): two globs of ``*``, ``?``,
    classes and literals, walked together."""
    if a.anchored != b.anchored:
        return True  # a name at some depth against a path: leave the exclusion out
    x, y = _tokens(a.glob), _tokens(b.glob)
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(x) and j == len(y):
            return True
        if i < len(x) and x[i] == "*":
            todo += [(i + 1, j)] + ([(i, j + 1)] if j < len(y) else [])
        if j < len(y) and y[j] == "*":
            todo += [(i, j + 1)] + ([(i + 1, j)] if i < len(x) else [])
        if i < len(x) and j < len(y) and "*" not in (x[i], y[j]) and _same_char(x[i], y[j]):
            todo.append((i + 1, j + 1))
    return False


def _tokens(glob: str) -> list[str]:
    """``*`` (any run, ``**`` too), ``?``, ``[...]`` (a class, taken as any character) or one character."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            while glob.startswith("*", i + 1):
                i += 1
            out.append("*")
        elif c == "[" and (end := glob.find("]", i + 2)) != -1:
            out.append("?")
            i = end
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append("\\" + glob[i])
        else:
            out.append(c)
        i += 1
    return out


def _same_char(a: str, b: str) -> bool:
    return "?" in (a, b) or a.lstrip("\\") == b.lstrip("\\")


def _union(rules: Iterable[_Rule]) -> re.Pattern[str] | None:
    patterns = [f"(?:{rule.regex.pattern})" for rule in rules]
    return re.compile("|".join(patterns)) if patterns else None


def _compile(raw: str) -> _Rule | None:
    negated = raw.startswith("!")
    glob = fold(raw[1:] if negated else raw).strip().rstrip("/")
    if not glob:
        return None
    anchored = "/" in glob
    glob = glob.lstrip("/")
    return _Rule(negated, anchored, re.compile(_translate(glob)), glob)


def _translate(glob: str) -> str:
    """A regular expression for one glob: ``*`` and ``?`` stop at ``/``, ``**`` does not, ``[...]`` a class."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                at_start = i == 0 or glob[i - 1] == "/"
                i += 2
                if at_start and i < n and glob[i] == "/":
                    out.append("(?:.*/)?")  # **/ : no directory or any number of them
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
