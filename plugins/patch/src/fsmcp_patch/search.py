"""Where a hunk's old lines are in a file: the match nearest the hint, or the closest near-match."""

from __future__ import annotations

from collections import Counter


def locate(keys: list[str], old: list[str], expected: int, lo: int) -> int | None:
    """Where ``old`` matches at or after ``lo``, nearest to ``expected`` (later first on a tie).

    GNU patch's search: outward from the hinted line, never before the end of the previous hunk.
    """
    n = len(old)
    hi = len(keys) - n
    if hi < lo:
        return None
    expected = min(max(expected, lo), hi)
    if n == 0:
        return expected
    first = old[0]

    def matches(p: int) -> bool:
        return keys[p] == first and keys[p:p + n] == old

    if matches(expected):
        return expected
    for d in range(1, max(expected - lo, hi - expected) + 1):
        if expected + d <= hi and matches(expected + d):
            return expected + d
        if expected - d >= lo and matches(expected - d):
            return expected - d
    return None


def closest(keys: list[str], old: list[str], expected: int, lo: int) -> tuple[int, int]:
    """The start at or after ``lo`` where the most of ``old``'s lines agree, nearest ``expected``."""
    hi = max(lo, len(keys) - len(old))
    wanted: dict[str, list[int]] = {}
    for i, key in enumerate(old):
        wanted.setdefault(key, []).append(i)
    score: Counter[int] = Counter()
    for q in range(lo, len(keys)):
        for i in wanted.get(keys[q], ()):
            if lo <= q - i <= hi:
                score[q - i] += 1
    if not score:
        return min(max(expected, lo), hi), 0
    best = max(score, key=lambda p: (score[p], -abs(p - expected)))
    return best, score[best]
