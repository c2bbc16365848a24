"""What a hunk that does not match expected, against the closest lines the file has.

The commonest patch failure is context a model misremembers, so the report puts the hunk's
lines beside the file's at the best candidate position and marks the lines that differ.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import TYPE_CHECKING

from fsmcp import lines_withheld

from .search import CLOSEST_WORK, closest, locate

if TYPE_CHECKING:
    from .parse import Hunk

_SHOWN = 16
"""Lines of each side shown around the first difference."""
_LIKE_TRIES = 5
"""Lines of a hunk looked for by likeness when none of them is in the file whole."""
_LIKE_CANDIDATES = 200
"""Lines compared by likeness for one word they share."""
_AROUND = 2
"""Lines of the file shown before and after the closest place of a hunk without line numbers."""
_WIDTH = 300
"""Characters of one line shown; a longer line is cut around where the two sides part."""


def name(hunk: Hunk, number: int, total: int, *, short: bool = False) -> str:
    """What messages call a hunk: ``hunk 2 of 3 (@@ -4,3 +4,3 @@)``, ``hunk 2`` when ``short``, or a block's label."""
    if hunk.label:
        return hunk.label.split(" of ")[0] if short else hunk.label
    return f"hunk {number}" if short else f"hunk {number} of {total} ({hunk.header})"


def describe(keys: list[str], hunk: Hunk, number: int, total: int, expected: int, lo: int, show: bool = True) -> str:
    """One hunk's failure: the expected lines, the closest found lines, and what differs; without
    ``show`` (a protected file) only which hunk failed: where it comes closest, or whether it was
    applied before, would confirm a guess of the file's lines as well as showing them."""
    old = [line.key for line in hunk.old]
    n = len(old)
    head = name(hunk, number, total)
    what = "SEARCH lines" if hunk.label else _lines(n)
    if lo >= len(keys):
        where = "the file is empty" if not keys else f"the file ends at line {len(keys)}, {_after(hunk)}"
        return f"{head}: its {what} are not in the file: {where}."
    if not show:
        return f"{head}: its {what} are not in the file. {lines_withheld('What the file has instead')}."
    if hunk.numbered:
        pos, agree, capped = closest(keys, old, expected, lo)
    else:
        # Found whitespace tolerated, so the closest place is judged the same way; where no line
        # agrees whole, where a line is most like one of the hunk's (no line number says where).
        stripped = [k.strip() for k in keys]
        pos, agree, capped = closest(stripped, [o.strip() for o in old], lo, lo)
        if not agree:
            pos = _most_like(stripped, old, lo, pos)
    found = keys[pos:pos + n]
    differs = [i for i in range(n) if i >= len(found) or found[i] != old[i]]
    first = differs[0] if differs else 0
    where = f" at or after line {lo + 1} ({_after(hunk)})" if lo else ""
    end = " at the end of the file (*** End of File)" if hunk.at_end else ""
    numbered = "numbered as its header says" if hunk.numbered else "numbered as the closest place"
    side = "the SEARCH lines" if hunk.label else "the hunk's ' ' and '-' lines"
    lines = [
        f"{head}: its {what} are not in the file{where}{end}.",
        (
            f"closest: line {pos + 1}, where {agree} of {n} agree; the first difference is at line {pos + first + 1}."
            if agree or hunk.numbered
            else f"closest: line {pos + 1}, where the lines are most like the hunk's; none agrees whole."
        ),
        f"expected ({side}, {numbered}):",
    ]
    if capped:
        lines.insert(2, f"(the search for the closest place stopped after {CLOSEST_WORK:,} line comparisons, the file and hunk being of look-alike lines: a closer place may lie further on)")
    start = max(0, first - 3)
    stop = min(n, start + _SHOWN)
    lines += _side(old, found, start, stop, hunk.old_start if hunk.numbered else pos + 1, n)
    lines.append("found:")
    width = len(str(pos + 1 + len(found)))
    if not hunk.numbered and not start:
        # A hunk found by its lines alone: the file's lines just around the place help place it.
        lines += [f"    {i + 1:>{width}} | {_clip(keys[i], '')}" for i in range(max(0, pos - _AROUND), pos)]
    lines += _side(found, old, start, min(stop, len(found)), pos + 1, len(found))
    if len(found) < n:
        lines.append("    (end of file)")
    elif not hunk.numbered and stop >= n:
        lines += [f"    {i + 1:>{width}} | {_clip(keys[i], '')}" for i in range(pos + n, min(len(keys), pos + n + _AROUND))]
    new = [line.key for line in hunk.new]
    if new != old and new:
        done = locate(keys, new, expected, 0)
        if done is not None:
            lines.append(
                f"note: the hunk's result (its ' ' and '+' lines) is already in the file at line {done + 1}; "
                "this change may have been applied before."
            )
    return "\n".join(lines)


def describe_anchor(keys: list[str], hunk: Hunk, anchor: str, number: int, total: int, lo: int, show: bool = True) -> str:
    """An apply_patch hunk whose @@ line is not in the file: the file's line most like it, with its neighbours."""
    where = f" after line {lo}" if lo else ""
    head = f"{name(hunk, number, total)}: its @@ line {anchor!r} is not in the file{where}."
    if not show:
        return f"{head} {lines_withheld('What the file has instead')}."
    best = _like([k.strip() for k in keys], anchor.strip(), lo)
    if best is None:
        return f"{head} No line{where} is like it; check the file's lines and the order of the hunks."
    start, stop = max(0, best - 2), min(len(keys), best + 3)
    width = len(str(stop))
    shown_lines = [f"  {'!' if i == best else ' '} {i + 1:>{width}} | {_clip(keys[i], anchor)}" for i in range(start, stop)]
    return "\n".join([head, f"nearest: line {best + 1}:", *shown_lines])


def _most_like(stripped: list[str], old: list[str], lo: int, otherwise: int) -> int:
    """Where the hunk would start if the first of its lines with a look-alike in the file were there."""
    tried = 0
    for i, line in enumerate(old):
        if tried == _LIKE_TRIES:
            break
        if not line.strip():
            continue
        tried += 1
        at = _like(stripped, line.strip(), lo)
        if at is not None:
            return min(max(at - i, lo), max(lo, len(stripped) - len(old)))
    return otherwise


def _like(stripped: list[str], text: str, lo: int) -> int | None:
    """The first line at or after ``lo`` most like ``text`` (difflib's ratio ≥ 0.5), or None.

    Only lines sharing one of its longest words are compared: the ratio of every line of a large
    file whose lines all look alike takes seconds.
    """
    for word in sorted(set(re.findall(r"\w{3,}", text)), key=len, reverse=True)[:3]:
        hits = [q for q in range(lo, len(stripped)) if word in stripped[q]][:_LIKE_CANDIDATES]
        like = _closest(text, [stripped[q] for q in hits], 0.5)
        if like is not None:
            return next(q for q in hits if stripped[q] == like)
    return None


def _closest(text: str, candidates: list[str], cutoff: float) -> str | None:
    """``difflib.get_close_matches(text, candidates, n=1, cutoff=cutoff)``'s one answer, found
    with fewer ratios: the candidates are taken by their quick ratio, an upper bound of the
    ratio, highest first, and the search stops where that bound cannot beat the best found (a
    patch failing in hundreds of blocks of look-alike lines took a minute of ratios)."""
    counts = Counter(text)
    bounds = []
    for x in set(candidates):
        length = len(x) + len(text)
        if 2.0 * min(len(x), len(text)) / length < cutoff:
            continue
        bound = 2.0 * sum((Counter(x) & counts).values()) / length
        if bound >= cutoff:
            bounds.append((bound, x))
    bounds.sort(reverse=True)
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(text)
    best: tuple[float, str] | None = None
    for bound, x in bounds:
        if best is not None and (bound, x) <= best:
            break  # as get_close_matches, the highest (ratio, line) wins: none left can
        matcher.set_seq1(x)
        ratio = matcher.ratio()
        if ratio >= cutoff and (best is None or (ratio, x) > best):
            best = (ratio, x)
    return None if best is None else best[1]


def _after(hunk: Hunk) -> str:
    return "after its @@ lines" if hunk.anchors else "where the previous hunk ends"


def _side(lines: list[str], other: list[str], start: int, stop: int, first_number: int, total: int) -> list[str]:
    width = len(str(first_number + total))
    out = ["    …"] if start else []
    for i in range(start, stop):
        mark = " " if i < len(other) and other[i] == lines[i] else "!"
        note = ""
        if mark == "!" and i < len(other) and "".join(lines[i].split()) == "".join(other[i].split()):
            note = "   [differs only in whitespace]"
        counterpart = other[i] if i < len(other) else ""
        out.append(f"  {mark} {first_number + i:>{width}} | {_clip(lines[i], counterpart)}{note}")
    if stop < total:
        out.append("    …")
    return out


def _lines(n: int) -> str:
    return "1 context or removed line" if n == 1 else f"{n} context and removed lines"


def _clip(text: str, other: str) -> str:
    if len(text) <= _WIDTH:
        return shown(text)
    parts = next((i for i, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    start = max(0, parts - _WIDTH // 3)
    stop = start + _WIDTH
    before = f"[…{start} characters] " if start else ""
    after = f" [{len(text) - stop} characters…]" if stop < len(text) else ""
    return before + shown(text[start:stop]) + after


def shown(text: str) -> str:
    """Text safe to send: bytes that were not UTF-8 appear as ``\\xNN``."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
