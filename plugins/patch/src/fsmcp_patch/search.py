"""Where a hunk's old lines are in a file: the match nearest the hint, or the closest near-match."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator


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
    return min(starts(keys, old, lo, hi), key=lambda p: (abs(p - expected), -p), default=None)


def starts(keys: list[str], old: list[str], lo: int, hi: int) -> Iterator[int]:
    """Every start in ``lo..hi`` where ``old`` (not empty) matches, in order: Knuth–Morris–Pratt,
    so a file of look-alike lines costs one pass, not one comparison of the hunk per line."""
    n = len(old)
    back = [0] * n
    k = 0
    for i in range(1, n):
        while k and old[i] != old[k]:
            k = back[k - 1]
        if old[i] == old[k]:
            k += 1
        back[i] = k
    k = 0
    for q in range(lo, min(len(keys), hi + n)):
        while k and keys[q] != old[k]:
            k = back[k - 1]
        if keys[q] == old[k]:
            k += 1
        if k == n:
            yield q - n + 1
            k = back[k - 1]


CLOSEST_WORK = 2_000_000
"""Line agreements counted in the search for the closest place: a file and hunk of look-alike
lines would otherwise cost the file's lines times the hunk's."""


def closest(keys: list[str], old: list[str], expected: int, lo: int) -> tuple[int, int, bool]:
    """The start at or after ``lo`` where the most of ``old``'s lines agree, nearest ``expected``;
    and whether the search stopped at CLOSEST_WORK, having seen only the file's first part."""
    hi = max(lo, len(keys) - len(old))
    wanted: dict[str, list[int]] = {}
    for i, key in enumerate(old):
        wanted.setdefault(key, []).append(i)
    score: Counter[int] = Counter()
    work = 0
    capped = False
    for q in range(lo, len(keys)):
        at = wanted.get(keys[q], ())
        work += len(at) + 1
        if work > CLOSEST_WORK:
            capped = True
            break
        for i in at:
            if lo <= q - i <= hi:
                score[q - i] += 1
    if not score:
        return min(max(expected, lo), hi), 0, capped
    best = max(score, key=lambda p: (score[p], -abs(p - expected)))
    return best, score[best], capped


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


def find(keys: list[str], old: list[str], lo: int, at_end: bool, seen: dict[int, list[str]]) -> tuple[int, int] | None:
    """Where ``old`` first matches at or after ``lo`` (only where it ends the file when ``at_end``),
    and the index in TOLERANCES of the least tolerance it takes; None when none matches.

    ``seen``: the file's lines as each tolerance sees them, by its index, filled as they are
    first needed; one per file, so that its hunks do not each make them again (hundreds of
    failing blocks in a long file made them for every block)."""
    n = len(old)
    hi = len(keys) - n
    if hi < lo:
        return None
    if at_end:
        lo = hi
    if n == 0:
        return lo, 0
    for tier, (_, same) in enumerate(TOLERANCES):
        if tier not in seen:
            seen[tier] = [same(key) for key in keys] if tier else keys
        hit = next(starts(seen[tier], [same(line) for line in old], lo, hi), None)
        if hit is not None:
            return hit, tier
    return None
