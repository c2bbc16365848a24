"""Aider's SEARCH/REPLACE blocks, read into one section per block::

    path/to/file.py
    ```python
    <<<<<<< SEARCH
    lines the file has
    =======
    the lines that replace them
    >>>>>>> REPLACE
    ```

The file's path is the nearest line of the three before ``<<<<<<< SEARCH`` that is not a fence
(```` ```path.py ```` names one too); a block without one is for the previous block's file. Each
block is a section of its own, so it applies to what the blocks before it left, and its SEARCH
lines are found anywhere in the file (the first match), as Aider does. An empty SEARCH creates a
missing file, or appends to one that exists.
"""

from __future__ import annotations

import difflib
import re

from fsmcp import ErrorCode, ToolError

from .parse import Hunk, Line, Section

_HEAD = re.compile(r"<{5,9} SEARCH>?")
# Exactly Aider's seven: a line of five or nine (an RST underline) is a line of the file.
_DIVIDER = "======="
_TAIL = re.compile(r">{5,9} REPLACE")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")


def head_line(lines: list[str]) -> int | None:
    """The line the first ``<<<<<<< SEARCH`` is on."""
    return next((i for i, line in enumerate(lines) if _HEAD.fullmatch(line.rstrip())), None)


def parse_search_replace(lines: list[str]) -> tuple[list[Section], list[range]]:
    """One section per block (``lines`` without their endings), and the lines each block spans;
    INVALID_PARAMS when a block is not closed."""
    blocks: list[tuple[str | None, list[str], list[str]]] = []
    spans: list[range] = []
    name: str | None = None
    after = i = 0
    while i < len(lines):
        if not _HEAD.fullmatch(lines[i].rstrip()):
            i += 1
            continue
        opened = i
        name = _name(lines[max(after, i - 3):i]) or name
        i, body = _until_tail(lines, i + 1, opened)
        dividers = [n for n, line in enumerate(body) if line.rstrip() == _DIVIDER]
        if len(dividers) != 1:
            raise _divided(opened, len(dividers))
        search, replace = body[: dividers[0]], body[dividers[0] + 1 :]
        blocks.append((name, search, replace))
        spans.append(range(opened, i + 1))
        after = i = i + 1
    total = len(blocks)
    return [_section(name, search, replace, f"block {n} of {total}") for n, (name, search, replace) in enumerate(blocks, 1)], spans


def _until_tail(lines: list[str], i: int, opened: int) -> tuple[int, list[str]]:
    taken = []
    while i < len(lines) and not _TAIL.fullmatch(lines[i].rstrip()):
        if _HEAD.fullmatch(lines[i].rstrip()):
            break
        taken.append(lines[i])
        i += 1
    if i >= len(lines) or not _TAIL.fullmatch(lines[i].rstrip()):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"the SEARCH/REPLACE block opened at line {opened + 1} has no '>>>>>>> REPLACE' at its end (line {i + 1}); nothing was changed",
        )
    return i, taken


def _divided(opened: int, dividers: int) -> ToolError:
    if not dividers:
        return ToolError(
            ErrorCode.INVALID_PARAMS,
            f"the SEARCH/REPLACE block opened at line {opened + 1} has no '=======' line (exactly seven '=') "
            "between its SEARCH and REPLACE lines; nothing was changed",
        )
    # A file's own '=======' (a merge conflict) in SEARCH or REPLACE: which one divides is a guess.
    return ToolError(
        ErrorCode.INVALID_PARAMS,
        f"the SEARCH/REPLACE block opened at line {opened + 1} has {dividers} '=======' lines, so where SEARCH ends "
        "is ambiguous; nothing was changed. Keep the file's own '=======' lines out of the block, "
        "or send the change as a unified diff or an apply_patch text",
    )


# difflib is cubic on repetitive lines (a SEARCH of 2,400 equal lines took 84 s): past this many
# lines between the shared start and end, the middle is replaced whole.
_DIFFED_LINES = 400


def _shared(search: list[str], replace: list[str]) -> list[Line]:
    """The hunk's lines: those SEARCH and REPLACE share become context, so the file keeps its own bytes for them."""
    start = 0
    while start < min(len(search), len(replace)) and search[start] == replace[start]:
        start += 1
    end = 0
    while end < min(len(search), len(replace)) - start and search[-1 - end] == replace[-1 - end]:
        end += 1
    old, new = search[start : len(search) - end], replace[start : len(replace) - end]
    body = [Line(" ", line) for line in search[:start]]
    if len(old) + len(new) <= _DIFFED_LINES:
        for op, a, b, c, d in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if op == "equal":
                body += [Line(" ", line) for line in old[a:b]]
                continue
            body += [Line("-", line) for line in old[a:b]]
            body += [Line("+", line) for line in new[c:d]]
    else:
        body += [Line("-", line) for line in old] + [Line("+", line) for line in new]
    return body + [Line(" ", line) for line in search[len(search) - end :]]


def _name(lines: list[str]) -> str | None:
    """The file a block is for, from the lines before it: the nearest that is a path, not prose."""
    for line in reversed(lines):
        bare = line.strip()
        if not bare:
            continue
        fence = _FENCE.fullmatch(bare)
        if fence:
            named = fence.group(2).strip()
            if named and ("." in named or "/" in named) and " " not in named:
                return named
            continue
        bare = bare.rstrip(":").lstrip("#").strip().strip("`*").strip()
        # A line with spaces is prose ("Now the second change:"): the previous block's file stands.
        return bare if bare and not any(c.isspace() for c in bare) else None
    return None


def _section(name: str | None, search: list[str], replace: list[str], label: str) -> Section:
    if not any(line.strip() for line in search):
        # -0,0: a missing file is created (as plan treats a diff without /dev/null); one that exists gets the lines at its end.
        hunk = Hunk(0, 0, 1, len(replace), "", [Line("+", r) for r in replace], numbered=False, at_end=True, label=label)
        return Section("modify", name, name, [hunk], name is not None)
    hunk = Hunk(1, len(search), 1, len(replace), "", _shared(search, replace), numbered=False, label=label)
    return Section("modify", name, name, [hunk], name is not None)
