"""Replacement templates for regex edits: JavaScript's ``$`` forms plus sed's ``\\1``.

A reference to a group the pattern lacks is an error, never an empty string: silently
dropping text is how a regex edit corrupts a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .jsregex import JsRegex, invalid

_DIGITS = "0123456789"


@dataclass(frozen=True)
class Template:
    """A parsed replacement: literal text, group numbers, group names, or ``$``` / ``$'``."""

    parts: tuple[str | int | tuple[str, str], ...]

    def expand(self, match: re.Match[str]) -> str:
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, int):
                out.append(match.group(part) or "")
            elif part[0] == "name":
                out.append(match.group(part[1]) or "")
            elif part[0] == "before":
                out.append(match.string[: match.start()])
            else:
                out.append(match.string[match.end() :])
        return "".join(out)


def parse_template(text: str, regex: JsRegex) -> Template:
    """Parse ``newText`` for a regex edit.

    ``$1``–``$99`` and ``\\1``–``\\9`` insert a group; ``$&``, ``$0`` and ``\\0`` the whole
    match; ``$<name>`` a named group; ``$``` and ``$'`` the text before and after the match;
    ``$$`` a ``$``; ``\\\\`` before a digit a backslash. A reference to a group the pattern
    lacks is INVALID_PARAMS, never an empty string.
    """
    parts: list[str | int | tuple[str, str]] = []
    literal: list[str] = []

    def emit(part: int | tuple[str, str]) -> None:
        if literal:
            parts.append("".join(literal))
            literal.clear()
        parts.append(part)

    def missing(ref: str, number: int) -> ToolError:
        return invalid(
            f"newText uses {ref}, but the regex {regex.source!r} has {regex.groups} capturing group(s); "
            f"add the group to the pattern, or write $$ for a literal $ (\\\\{number} for a literal backslash and digit)"
        )

    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "$" and nxt == "$":
            literal.append("$")
            i += 2
        elif c == "$" and nxt in "&`'" and nxt:
            emit({"&": 0, "`": ("before", ""), "'": ("after", "")}[nxt])
            i += 2
        elif c == "$" and nxt and nxt in _DIGITS:
            two = text[i + 1 : i + 3]
            if len(two) == 2 and two[1] in _DIGITS and 1 <= int(two) <= regex.groups:
                emit(int(two))
                i += 3
            else:
                number = int(nxt)
                if number > regex.groups:
                    raise missing(f"${number}", number)
                emit(number)
                i += 2
        elif c == "$" and nxt == "<":
            end = text.find(">", i)
            name = text[i + 2 : end] if end > 0 else ""
            if end < 0 or name not in regex.names:
                raise invalid(
                    f"newText uses $<{name}…>, but the regex {regex.source!r} has no group named {name!r}"
                    + (f" (its names: {', '.join(sorted(regex.names))})" if regex.names else "")
                    + "; write $$< for a literal $<"
                )
            emit(("name", name))
            i = end + 1
        elif c == "\\" and nxt and nxt in _DIGITS:
            number = int(nxt)
            if number > regex.groups:
                raise missing(f"\\{number}", number)
            emit(number)
            i += 2
        elif c == "\\" and nxt == "\\" and text[i + 2 : i + 3] and text[i + 2] in _DIGITS:
            literal.append("\\" + text[i + 2])
            i += 3
        else:
            literal.append(c)
            i += 1
    if literal:
        parts.append("".join(literal))
    return Template(tuple(parts))
