"""Markdown headings (ATX, outside fenced code), each reaching to the next of its level or above."""

from __future__ import annotations

import re

from .symbols import Symbol, one_line

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def markdown_symbols(text: str) -> list[Symbol]:
    lines = text.splitlines()
    found: list[tuple[int, int, str]] = []  # (line, level, title)
    fence = ""
    for number, line in enumerate(lines, 1):
        if m := _FENCE.match(line):
            if not fence:
                fence = m.group(1)
            elif m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if not fence and (m := _HEADING.match(line)):
            found.append((number, len(m.group(1)), m.group(2).strip()))
    symbols = []
    trail: list[tuple[int, str]] = []  # the open headings above this one: (level, title)
    for i, (number, level, title) in enumerate(found):
        end = next((n - 1 for n, lv, _ in found[i + 1 :] if lv <= level), len(lines))
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, title))
        symbols.append(Symbol("heading", tuple(t for _, t in trail), one_line("#" * level + " " + title), number, end))
    return symbols
