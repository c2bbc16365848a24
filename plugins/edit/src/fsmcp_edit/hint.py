"""For an ``oldText`` that is not in the file: where the closest text is, and how it differs."""

from __future__ import annotations

from collections import Counter
from difflib import get_close_matches

from .document import shown
from .fallback import split_block
from .view import View

_SHOW_LINES = 12
_SHOW_CHARS = 200
_FUZZY_MAX_LINES = 50_000


def closest(view: View, old_text: str) -> str:
    """A message fragment naming the closest region and its first differing line, or ``""``."""
    old_lines, _ = split_block(old_text)
    lines = view.norm.split("\n")
    start = _best_start(lines, old_lines)
    if start is None:
        return ""
    start = max(0, min(start, len(lines) - 1))
    region = lines[start : start + len(old_lines)]
    first, last = start + 1, start + len(region)
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    out = [f" The closest text is at {where}:"]
    out += [f"{first + k}: {_clip(line)}" for k, line in enumerate(region[:_SHOW_LINES])]
    if len(region) > _SHOW_LINES:
        out.append(f"… ({len(region) - _SHOW_LINES} more lines)")
    k = _first_difference(old_lines, region)
    if k is not None:
        expected = old_lines[k]
        if k >= len(region):
            out.append(f"oldText runs past the end of the file: its line {k + 1} ({_clip(expected)}) has nothing to match.")
        else:
            out.append(f"First difference, line {first + k}:")
            out.append(f"  expected: {_clip(expected)}")
            out.append(f"  found:    {_clip(region[k])}")
            out.append(_why(expected, region[k]))
    return "\n".join(line for line in out if line)


def _first_difference(old_lines: list[str], region: list[str]) -> int | None:
    """The first line that differs beyond indentation, else the first that differs at all."""
    stripped = [k for k, line in enumerate(old_lines) if k >= len(region) or region[k].strip() != line.strip()]
    if stripped:
        return stripped[0]
    return next((k for k, line in enumerate(old_lines) if region[k] != line), None)


def _best_start(lines: list[str], old_lines: list[str]) -> int | None:
    """The start line whose block shares the most lines (ignoring indentation) with ``old_lines``."""
    wanted: dict[str, list[int]] = {}
    for j, line in enumerate(old_lines):
        if line.strip():
            wanted.setdefault(line.strip(), []).append(j)
    if not wanted:
        return None
    votes: Counter[int] = Counter()
    for i, line in enumerate(lines):
        offsets = wanted.get(line.strip())
        if offsets:
            for j in offsets:
                votes[i - j] += 1
    if votes:
        best = max(votes.values())
        return min(s for s, v in votes.items() if v == best)
    if len(lines) > _FUZZY_MAX_LINES:
        return None
    anchor = next(j for j, line in enumerate(old_lines) if line.strip())
    keys = [line.strip() for line in lines]
    match = get_close_matches(old_lines[anchor].strip(), set(keys), n=1, cutoff=0.6)
    return keys.index(match[0]) - anchor if match else None


def _why(expected: str, found: str) -> str:
    if expected.strip() == found.strip():
        return f"  They differ only in leading/trailing whitespace: expected {shown(expected)!r}, found {shown(found)!r}."
    if expected.casefold() == found.casefold():
        return "  They differ only in letter case (caseInsensitive: true matches them)."
    if expected.split() == found.split():
        return "  They differ only in the whitespace between words."
    if expected.strip() and expected.strip() in found:
        return "  oldText has only part of this line; without an exact match, lines are compared whole, so give the whole line."
    return ""


def _clip(line: str) -> str:
    line = shown(line)
    return line if len(line) <= _SHOW_CHARS else line[:_SHOW_CHARS] + "…"
