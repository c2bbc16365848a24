"""The three forms a patch may take, told apart by the text, and the words each one's messages use."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsmcp import ErrorCode, ToolError

from .begin_patch import BEGIN, begin_line, end_line, parse_begin_patch
from .fence import unfence
from .parse import Section, parse
from .search_replace import head_line, parse_search_replace


@dataclass(frozen=True)
class Format:
    noun: str
    """What one change within a file is called: ``hunk`` or ``block``."""
    creates: str
    deletes: str
    names: str
    """How the text names a file, for a patch that names none."""
    rule: str
    """What the old lines must be, for the advice after a mismatch."""


UNIFIED = Format(
    "hunk",
    "--- /dev/null",
    "+++ /dev/null",
    "'---'/'+++' header lines",
    "make the diff again from the current content (the ' ' and '-' lines must be the file's lines exactly, apart from line endings)",
)
APPLY_PATCH = Format(
    "hunk",
    "*** Add File",
    "*** Delete File",
    "'*** Update File: PATH' lines",
    "make the hunks again from the current content (the ' ' and '-' lines must be the file's lines; whitespace at their ends is tolerated)",
)
SEARCH_REPLACE = Format(
    "block",
    "an empty SEARCH",
    "",
    "a line with the file's path before each '<<<<<<< SEARCH'",
    "make the blocks again from the current content (the SEARCH lines must be the file's lines; whitespace at their ends is tolerated)",
)


def read(text: str) -> tuple[Format, list[Section]]:
    """The patch's form and its sections; INVALID_PARAMS when it is none of the three or malformed.

    A marker counts only at the start of a line, where no line of a unified diff's hunk can put it.
    The first marker decides the form; another form's marker may stand only inside what the first
    form reads (a block's own lines, an apply_patch envelope). Anywhere else the text mixes forms,
    and reading one would silently drop the other: refused.
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[-1] == "":
        lines.pop()
    begin, head = begin_line(lines), head_line(lines)
    if begin is not None and (head is None or begin < head):
        sections = parse_begin_patch(lines, begin)
        _one_form(lines, [range(begin, (end_line(lines, begin) or begin) + 1)], "an apply_patch text")
        return APPLY_PATCH, sections
    if head is not None:
        sections, spans = parse_search_replace(lines)
        _one_form(lines, spans, "SEARCH/REPLACE blocks")
        return SEARCH_REPLACE, sections
    return UNIFIED, parse(unfence(text))


_DIFF_LINE = re.compile(r"diff --git |@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _one_form(lines: list[str], read: list[range], form: str) -> None:
    """INVALID_PARAMS when a line outside what ``form`` read starts another form."""
    inside = bytearray(len(lines))
    for span in read:
        inside[span.start : span.stop] = b"\1" * len(span)
    for i, line in enumerate(lines):
        if inside[i]:
            continue
        other = None
        if _DIFF_LINE.match(line) or (line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            other = "a unified diff"
        elif line.rstrip() == BEGIN:
            other = "an apply_patch text ('*** Begin Patch')"
        elif head_line([line]) is not None:
            other = "a SEARCH/REPLACE block"
        if other:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"the patch mixes two forms: {form} and, at line {i + 1}, {other}; one call reads one form, "
                "so nothing was changed. Send each form in a call of its own",
            )
