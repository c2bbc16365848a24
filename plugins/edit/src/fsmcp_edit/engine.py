"""A list of edits applied in order to text in memory; the first failure stops everything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fsmcp import ToolError

from .regions import ChangedRegion, track
from .lines import line_edit
from .models import EditItem
from .replace import replace_edit
from .view import View


@dataclass(frozen=True)
class Outcome:
    """The edited text, how many replacements were made, and the regions that changed."""

    text: str
    replacements: int
    changes: list[ChangedRegion]


def apply_edits(text: str, edits: Sequence[EditItem], *, hints: bool = True) -> Outcome:
    """``hints``: an oldText not found gets the closest text of the file (off for a protected file)."""
    changes: list[ChangedRegion] = []
    replacements = 0
    for number, item in enumerate(edits, 1):
        view = View(text)
        try:
            spans = [line_edit(view, item)] if item.type == "line" else replace_edit(view, item, hints=hints)
        except ToolError as exc:
            if len(edits) == 1:
                raise
            raise ToolError(exc.code, f"edit {number} of {len(edits)}: {exc.message}", exc.details) from None
        text = splice(text, spans)
        changes = track(changes, spans)
        replacements += len(spans)
    return Outcome(text, replacements, changes)


CHUNK = 1 << 22


def splice(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each sorted ``(begin, end, new)`` span replaced.

    Built by appending pieces of at most :data:`CHUNK` characters to one string, which CPython
    grows in place: a 200 MB text costs itself and its result, not also a copy of every piece.
    """
    out = text[:0]
    at = 0
    for begin, end, new in [*spans, (len(text), len(text), "")]:
        for piece in range(at, begin, CHUNK):
            out += text[piece : min(piece + CHUNK, begin)]
        out += new
        at = end
    return out
