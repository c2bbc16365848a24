"""Line edits: insert before a line, replace or delete a range of lines, by number."""

from __future__ import annotations

from fsmcp import ErrorCode, ToolError

from .models import EditItem
from .view import View, crlf_to_lf

Span = tuple[int, int, str]


def line_edit(view: View, item: EditItem) -> Span:
    """The ``(begin, end, replacement)`` span, in the real text, of one line edit."""
    assert item.line_number is not None
    count = view.line_count
    if item.action == "insert":
        line = count + 1 if item.line_number == 0 else view.from_end(item.line_number)
        _check(1 <= line <= count + 1, item.line_number, count, insert=True)
        return _insert(view, line, _content_lines(item.content or ""))
    first = view.from_end(item.line_number)
    last = view.from_end(item.end_line) if item.end_line is not None else first
    _check(1 <= first <= count, item.line_number, count)
    _check(first <= last <= count, item.end_line, count, end=True)
    if item.action == "replace":
        begin, end = view.orig(view.line_start(first)), view.orig(view.line_end(last))
        eol = view.eol_for(begin, end)
        return begin, end, eol.join(_content_lines(item.content or ""))
    begin, end = view.orig(view.line_start(first)), view.orig(view.line_start(last + 1))
    if last == count and first > 1 and not view.norm.endswith("\n"):
        # The file has no final newline: removing its last lines takes the break before them.
        begin = view.orig(view.line_end(first - 1))
    return begin, end, ""


def _insert(view: View, line: int, lines: list[str]) -> Span:
    count = view.line_count
    if line <= count:
        at = view.orig(view.line_start(line))
        eol = view.eol_for(at, at)
        return at, at, "".join(text + eol for text in lines)
    end = len(view.text)
    eol = view.dominant_eol
    if view.norm and not view.norm.endswith("\n"):
        # Appending to a file without a final newline keeps it without one.
        return end, end, eol + eol.join(lines)
    return end, end, eol.join(lines) + eol


def _content_lines(content: str) -> list[str]:
    text = crlf_to_lf(content)
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def _check(ok: bool, number: int | None, count: int, *, insert: bool = False, end: bool = False) -> None:
    if ok:
        return
    name = "endLine" if end else "lineNumber"
    valid = f"1..{count + 1}, 0 for the end, or -1..-{count} from the end" if insert else f"1..{count} or -1..-{count} from the end"
    if count == 0 and not insert:
        valid = "none: the file is empty; insert instead"
    extra = " (and not before lineNumber)" if end else ""
    raise ToolError(ErrorCode.INVALID_PARAMS, f"{name} {number} is not a line of the file, which has {count} lines; valid{extra}: {valid}")
