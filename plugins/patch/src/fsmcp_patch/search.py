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


# What a hunk without line numbers may get wrong, most exact first (codex's apply_patch and Aider
# tolerate the same): trailing whitespace, then indentation, then typographic punctuation.
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    }
)
TOLERANCES = (
    ("", lambda s: s),
    ("ignoring trailing whitespace", str.rstrip),
    ("ignoring indentation", str.strip),
    ("ignoring typographic quotes and dashes", lambda s: s.strip().translate(_PUNCTUATION)),
)


def find(keys: list[str], old: list[str], lo: int, at_end: bool) -> tuple[int, int] | None:
    """Where ``old`` first matches at or after ``lo`` (only where it ends the file when ``at_end``),
    and the index in TOLERANCES of the least tolerance it takes; None when none matches."""
    n = len(old)
    hi = len(keys) - n
    if hi < lo:
        return None
    starts = range(hi, hi + 1) if at_end else range(lo, hi + 1)
    if n == 0:
        return starts[0], 0
    for tier, (_, same) in enumerate(TOLERANCES):
        want = [same(line) for line in old]
        first = want[0]
        for p in starts:
            if same(keys[p]) == first and all(same(keys[p + k]) == want[k] for k in range(1, n)):
                return p, tier
    return None
