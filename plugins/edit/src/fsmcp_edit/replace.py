"""One replace edit: find ``oldText`` (literal, regex or whitespace-tolerant), choose, substitute."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsmcp import ErrorCode, ToolError, lines_withheld

from . import fallback
from .hint import closest
from .jsregex import compile_js
from .models import EditItem
from .template import parse_template
from .view import View, crlf_to_lf

Span = tuple[int, int, str]
_LIST_LINES = 20


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    match: re.Match[str] | None = None


def replace_edit(view: View, item: EditItem, *, hints: bool = True) -> list[Span]:
    """The ``(begin, end, replacement)`` spans, in the real text, that this edit makes."""
    first, last = _scope(view, item)
    lo, hi = (view.line_start(first), view.line_start(last + 1)) if last else (0, len(view.norm))
    if item.is_regex:
        return _regex(view, item, lo, hi)
    old = crlf_to_lf(item.old_text or "")
    new = crlf_to_lf(item.new_text)
    hits, candidates = _literal_hits(view.norm, old, item.case_insensitive, lo, hi)
    if hits:
        chosen = _choose(view, item, hits, candidates, "oldText")
        return [_span(view, h.start, h.end, fallback.reindent_line_hit(view, h.start, old, new)) for h in chosen]
    if _tolerant(item):
        old_lines, old_nl = fallback.split_block(old)
        starts = fallback.find_blocks(view, old_lines, first - 1, last - 1 if last else None)
        if starts:
            blocks = [Hit(view.line_start(s + 1), view.line_start(s + 1)) for s in starts]
            chosen = _choose(view, item, blocks, blocks, "oldText, ignoring indentation,")
            return [fallback.replace_block(view, view.line_of(h.start) - 1, old_lines, old_nl, item.new_text) for h in chosen]
    raise _not_found(view, item, old, lo, hi, first, last, hints)


def _scope(view: View, item: EditItem) -> tuple[int, int]:
    """First and last line of the edit's scope; last is 0 for the whole file (not counted)."""
    if item.start_line is None and item.end_line is None:
        return 1, 0
    count = view.line_count
    first = view.from_end(item.start_line) if item.start_line is not None else 1
    last = view.from_end(item.end_line) if item.end_line is not None else max(count, 1)
    if not (1 <= first <= last <= max(count, 1)):
        given = [f"{name} {n}" for name, n in (("startLine", item.start_line), ("endLine", item.end_line)) if n is not None]
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{' and '.join(given)} is not a range of lines in the file, which has {count} lines (1..{count}, or -1..-{count} from the end)",
        )
    return first, last


def _tolerant(item: EditItem) -> bool:
    """The whitespace-tolerant fallback runs only for a plain literal edit of one place."""
    return not item.case_insensitive and item.limit == 1 and item.expected_occurrences in (None, 1)


def _literal_hits(norm: str, old: str, fold: bool, lo: int, hi: int) -> tuple[list[Hit], list[Hit]]:
    """Non-overlapping hits (what replacing all would replace) and every start, overlaps too."""
    if fold:
        hits = [Hit(m.start(), m.end()) for m in re.compile(re.escape(old), re.IGNORECASE).finditer(norm, lo, hi)]
        if len(hits) > 1:
            return hits, hits
        overlapping = re.compile(f"(?=({re.escape(old)}))", re.IGNORECASE)
        return hits, [Hit(m.start(), m.start() + len(m.group(1))) for m in overlapping.finditer(norm, lo, hi)]
    first = norm.find(old, lo, hi)
    if first < 0:
        return [], []
    # One pass for the usual case: the search for a second start begins where the first ended.
    following = norm.find(old, first + 1, hi)
    if following < 0:
        return [Hit(first, first + len(old))], [Hit(first, first + len(old))]
    starts = [first]
    while following >= 0:
        starts.append(following)
        following = norm.find(old, following + 1, hi)
    hits, end = [], 0
    for start in starts:
        if start >= end:
            hits.append(Hit(start, start + len(old)))
            end = start + len(old)
    return hits, [Hit(start, start + len(old)) for start in starts]


def _regex(view: View, item: EditItem, lo: int, hi: int) -> list[Span]:
    regex = compile_js(item.old_text or "", ignore_case=item.case_insensitive, dot_all=item.dot_all)
    template = parse_template(crlf_to_lf(item.new_text), regex)
    # The empty "line" after a final newline is not a line: ^ or $ alone must not add one there.
    hits = [
        Hit(m.start(), m.end(), m)
        for m in regex.matches(view.norm, lo, hi)
        if not (m.start() == m.end() == hi and hi > 0 and view.norm[hi - 1] == "\n")
    ]
    if not hits:
        raise _not_found(view, item, None, lo, hi, *_scope(view, item))
    chosen = _choose(view, item, hits, hits, "the regex")
    return [_span(view, h.start, h.end, template.expand(h.match)) for h in chosen if h.match is not None]


def _span(view: View, start: int, end: int, new: str) -> Span:
    begin, stop = view.orig(start), view.orig(end)
    eol = view.eol_for(begin, stop)
    return begin, stop, new if eol == "\n" else eol.join(new.split("\n"))


def _choose(view: View, item: EditItem, hits: list[Hit], candidates: list[Hit], what: str) -> list[Hit]:
    expected = item.expected_occurrences
    if expected is not None and len(hits) != expected:
        raise ToolError(
            ErrorCode.EDIT_CONFLICT,
            f"expectedOccurrences is {expected}, but {what} occurs {_times(len(hits))}{_at_lines(view, hits)}. "
            "Re-read the file and check which places you mean; then set expectedOccurrences to match, or narrow the edit",
        )
    limit = item.limit if "limit" in item.model_fields_set or expected is None else 0
    if limit == 0:
        return hits
    if limit > 1:
        return hits[:limit]
    if len(candidates) == 1 or (item.is_regex and item.near_line is None):
        return candidates[:1]
    if item.start_line is not None and item.end_line is None and item.near_line is None:
        # startLine alone says where the search starts (as start_line does elsewhere): the first one from there.
        return candidates[:1]
    if item.near_line is not None:
        near = view.from_end(item.near_line)
        distance = sorted((abs(view.line_of(h.start) - near), k) for k, h in enumerate(candidates))
        if len(distance) == 1 or distance[0][0] < distance[1][0]:
            return [candidates[distance[0][1]]]
        tied = [candidates[k] for d, k in distance if d == distance[0][0]]
        raise ToolError(
            ErrorCode.NOT_UNIQUE,
            f"{what} occurs {_times(len(tied))} equally near line {near}{_at_lines(view, tied)}; "
            "add surrounding lines to oldText so it matches one place",
        )
    raise ToolError(
        ErrorCode.NOT_UNIQUE,
        f"{what} occurs {_times(len(candidates))}{_at_lines(view, candidates)}. Add surrounding lines to oldText so it "
        "matches one place, give nearLine to edit the occurrence nearest a line, or set limit: 0 to replace every "
        "one (limit: N for the first N)",
        {"lines": [view.line_of(h.start) for h in candidates]},
    )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _at_lines(view: View, hits: list[Hit]) -> str:
    if not hits:
        return ""
    numbers = [str(view.line_of(h.start)) for h in hits[:_LIST_LINES]]
    if len(hits) > _LIST_LINES:
        listed = ", ".join(numbers) + f" and {len(hits) - _LIST_LINES} more"
    else:
        listed = " and ".join([", ".join(numbers[:-1]), numbers[-1]]) if len(numbers) > 1 else numbers[0]
    return f", at line{'s' if len(hits) > 1 else ''} {listed}"


def _not_found(view: View, item: EditItem, old: str | None, lo: int, hi: int, first: int, last: int, hints: bool = True) -> ToolError:
    scoped = (lo, hi) != (0, len(view.norm))
    where = f" in lines {first}-{last}" if scoped else ""
    if old is None:
        return ToolError(
            ErrorCode.PATTERN_NOT_FOUND,
            f"the regex {item.old_text!r} matched nothing{where}. Check it with dryRun, or search with grep_files",
        )
    message = f"oldText was not found{where}"
    if scoped:
        elsewhere, _ = _literal_hits(view.norm, old, item.case_insensitive, 0, len(view.norm))
        if elsewhere:
            message += f" (it occurs outside that range{_at_lines(view, elsewhere)})"
    elif _tolerant(item):
        message += " (neither exactly nor ignoring indentation)"
    if not hints:
        message += f". {lines_withheld('The closest text')}. Ask the user for the exact text, or replace the whole file with write_file."
        return ToolError(ErrorCode.PATTERN_NOT_FOUND, message)
    message += ". Copy the text exactly as the file has it (read_file shows it), then retry."
    return ToolError(ErrorCode.PATTERN_NOT_FOUND, message + ("" if scoped else closest(view, old)))
