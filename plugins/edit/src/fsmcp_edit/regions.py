"""Where a sequence of edits changed the text, so the diff looks only there.

Each edit reports its spans in the text as that edit found it. ``track`` folds them into the
regions changed so far, each known in the original text and in the current one; between
regions the two texts are the same, so a 5 MB file with 200 scattered edits is diffed as 200
small pieces rather than as two 5 MB sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Span = tuple[int, int, str]


@dataclass(frozen=True)
class ChangedRegion:
    """``original[old_start:old_end]`` became ``current[new_start:new_end]``."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int

    @property
    def growth(self) -> int:
        return (self.new_end - self.new_start) - (self.old_end - self.old_start)


@dataclass
class _Open:
    old_start: int
    start: int
    end: int
    shift_before: int


def track(changes: Sequence[ChangedRegion], spans: Sequence[Span]) -> list[ChangedRegion]:
    """The changes after one more edit, whose sorted ``(begin, end, new text)`` spans are in
    the text as it was before that edit (which is the ``new`` side of ``changes``)."""
    out: list[ChangedRegion] = []
    i = 0
    passed = 0  # growth of the changes passed: maps an offset between changes back to the original
    shift = 0  # growth from this edit's spans passed: maps an offset to the text after this edit
    pending: _Open | None = None

    def flush() -> None:
        assert pending is not None
        out.append(ChangedRegion(pending.old_start, pending.end - passed, pending.start + pending.shift_before, pending.end + shift))

    for begin, end, new in spans:
        if pending is not None and begin > pending.end:
            flush()
            pending = None
        while i < len(changes) and changes[i].new_end < begin and pending is None:
            c = changes[i]
            out.append(ChangedRegion(c.old_start, c.old_end, c.new_start + shift, c.new_end + shift))
            passed += c.growth
            i += 1
        if pending is None:
            pending = _Open(begin - passed, begin, end, shift)
        pending.end = max(pending.end, end)
        shift += len(new) - (end - begin)
        while i < len(changes) and changes[i].new_start <= pending.end:
            c = changes[i]
            pending.old_start = min(pending.old_start, c.old_start)
            pending.start = min(pending.start, c.new_start)
            pending.end = max(pending.end, c.new_end)
            passed += c.growth
            i += 1
    if pending is not None:
        flush()
    out += [ChangedRegion(c.old_start, c.old_end, c.new_start + shift, c.new_end + shift) for c in changes[i:]]
    return out
