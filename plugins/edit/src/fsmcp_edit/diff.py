"""The unified diff of an edit, computed only around what changed, so a 5 MB file stays cheap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from .regions import ChangedRegion
from .document import shown

CONTEXT = 3


@dataclass(frozen=True)
class Diff:
    text: str
    added: int
    removed: int


def unified_diff(path: str, old: str, new: str, changes: Sequence[ChangedRegion]) -> Diff:
    """``--- path`` / ``+++ path`` / ``@@`` hunks for ``old`` → ``new``, which differ only in ``changes``."""
    if old == new:
        return Diff("", 0, 0)
    out = [f"--- {path}", f"+++ {path}"]
    added = removed = 0
    for a, c, old_lines, new_lines in _windows(old, new, changes):
        matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for group in matcher.get_grouped_opcodes(CONTEXT):
            i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
            out.append(f"@@ -{_range(a + i1, i2 - i1)} +{_range(c + j1, j2 - j1)} @@")
            for tag, x1, x2, y1, y2 in group:
                if tag == "equal":
                    out += _show(" ", old_lines[x1:x2])
                    continue
                out += _show("-", old_lines[x1:x2])
                out += _show("+", new_lines[y1:y2])
                removed += x2 - x1
                added += y2 - y1
    return Diff("\n".join(out) if added or removed else "", added, removed)


def _windows(old: str, new: str, changes: Sequence[ChangedRegion]) -> list[tuple[int, int, list[str], list[str]]]:
    """Around each change, with context, merged where their context would touch: the first
    line's 0-based number in old and in new, and the lines of each. Only these lines are cut
    out of the texts, so a 200 MB file costs what its changed lines do."""
    old_at, new_at = _LineOf(old), _LineOf(new)
    spans: list[list[int]] = []
    for ch in changes:
        a, b, old_clean = old_at.span(ch.old_start, ch.old_end)
        c, d, new_clean = new_at.span(ch.new_start, ch.new_end)
        # The line where the change ends is untouched only if it starts afresh on both sides.
        if not (old_clean and new_clean):
            b, d = b + 1, d + 1
        if spans and a - spans[-1][1] <= 2 * CONTEXT:
            spans[-1][1], spans[-1][3] = max(spans[-1][1], b), max(spans[-1][3], d)
        else:
            spans.append([a, b, c, d, old_at.line_start(ch.old_start), new_at.line_start(ch.new_start)])
    windows = []
    for a, b, c, d, a_at, c_at in spans:
        first_old, first_new = max(0, a - CONTEXT), max(0, c - CONTEXT)
        old_lines = _take(old, _back(old, a_at, a - first_old), b + CONTEXT - first_old)
        new_lines = _take(new, _back(new, c_at, c - first_new), d + CONTEXT - first_new)
        windows.append((first_old, first_new, old_lines, new_lines))
    return windows


class _LineOf:
    """Lines touched by character spans asked in increasing order: one pass over the text."""

    def __init__(self, text: str):
        self.text = text
        self.at = 0
        self.line = 0

    def _line(self, offset: int) -> int:
        self.line += self.text.count("\n", self.at, offset)
        self.at = offset
        return self.line

    def span(self, start: int, end: int) -> tuple[int, int, bool]:
        """The 0-based lines of ``start`` and ``end``, and whether ``end`` is at a line start."""
        return self._line(start), self._line(end), end == 0 or self.text[end - 1] == "\n"

    def line_start(self, offset: int) -> int:
        """Where the line holding ``offset`` starts."""
        return self.text.rfind("\n", 0, offset) + 1


def _back(text: str, at: int, lines: int) -> int:
    """The start of the line ``lines`` lines before the one starting at ``at``."""
    for _ in range(lines):
        if at == 0:
            break
        at = text.rfind("\n", 0, at - 1) + 1
    return at


def _take(text: str, at: int, count: int) -> list[str]:
    """Up to ``count`` lines from ``at``, each with its newline (the last may have none)."""
    lines = []
    while len(lines) < count and at < len(text):
        end = text.find("\n", at) + 1 or len(text)
        lines.append(text[at:end])
        at = end
    return lines


def _show(mark: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        body = line[:-1] if line.endswith("\n") else line
        out.append(mark + shown(body[:-1] if body.endswith("\r") else body))
        if not line.endswith("\n"):
            out.append("\\ No newline at end of file")
    return out


def _range(start: int, length: int) -> str:
    first = start + 1
    if length == 1:
        return str(first)
    return f"{first - 1 if length == 0 else first},{length}"
