"""The unified diff of an edit, computed only around what changed, so a 5 MB file stays cheap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from .changes import Change
from .document import shown

CONTEXT = 3


@dataclass(frozen=True)
class Diff:
    text: str
    added: int
    removed: int


def unified_diff(path: str, old: str, new: str, changes: Sequence[Change]) -> Diff:
    """``--- path`` / ``+++ path`` / ``@@`` hunks for ``old`` → ``new``, which differ only in ``changes``."""
    if old == new:
        return Diff("", 0, 0)
    old_lines, new_lines = _lines(old), _lines(new)
    out = [f"--- {path}", f"+++ {path}"]
    added = removed = 0
    for a, b, c, d in _windows(old, new, changes, len(old_lines), len(new_lines)):
        matcher = SequenceMatcher(None, old_lines[a:b], new_lines[c:d], autojunk=False)
        for group in matcher.get_grouped_opcodes(CONTEXT):
            i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
            out.append(f"@@ -{_range(a + i1, i2 - i1)} +{_range(c + j1, j2 - j1)} @@")
            for tag, x1, x2, y1, y2 in group:
                if tag == "equal":
                    out += _show(" ", old_lines[a + x1 : a + x2])
                    continue
                out += _show("-", old_lines[a + x1 : a + x2])
                out += _show("+", new_lines[c + y1 : c + y2])
                removed += x2 - x1
                added += y2 - y1
    return Diff("\n".join(out) if added or removed else "", added, removed)


def _windows(old: str, new: str, changes: Sequence[Change], old_count: int, new_count: int) -> list[list[int]]:
    """Line ranges ``[a, b)`` of old and ``[c, d)`` of new around each change, with context,
    merged where their context would touch."""
    old_at, new_at = _LineOf(old), _LineOf(new)
    windows: list[list[int]] = []
    for ch in changes:
        a, b, old_clean = old_at.span(ch.old_start, ch.old_end)
        c, d, new_clean = new_at.span(ch.new_start, ch.new_end)
        # The line where the change ends is untouched only if it starts afresh on both sides.
        if not (old_clean and new_clean):
            b, d = b + 1, d + 1
        if windows and a - windows[-1][1] <= 2 * CONTEXT:
            windows[-1][1], windows[-1][3] = max(windows[-1][1], b), max(windows[-1][3], d)
        else:
            windows.append([a, b, c, d])
    for w in windows:
        w[0], w[2] = max(0, w[0] - CONTEXT), max(0, w[2] - CONTEXT)
        w[1], w[3] = min(old_count, w[1] + CONTEXT), min(new_count, w[3] + CONTEXT)
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


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
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
