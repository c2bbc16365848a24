"""The three forms a patch may take, told apart by the text, and the words each one's messages use."""

from __future__ import annotations

from dataclasses import dataclass

from .begin_patch import begin_line, parse_begin_patch
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

    A marker counts only at the start of a line, where no line of a unified diff's hunk can put it;
    when both kinds are there, the first decides (a block may quote an apply_patch text, and the
    reverse).
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[-1] == "":
        lines.pop()
    begin, head = begin_line(lines), head_line(lines)
    if begin is not None and (head is None or begin < head):
        return APPLY_PATCH, parse_begin_patch(lines, begin)
    if head is not None:
        return SEARCH_REPLACE, parse_search_replace(lines)
    return UNIFIED, parse(unfence(text))
