"""ECMAScript regular expressions and replacement templates, translated for Python's ``re`` syntax.

Models write JavaScript regexes. Passed to ``re`` unchanged, many of them compile and then
match something else: ``\\d`` and ``\\w`` take non-ASCII digits and letters, ``$`` matches
before a final newline, ``{,3}`` is a quantifier, ``\\a`` is a bell, ``a*+`` is possessive,
a backreference to a group that did not take part fails the match. So every construct is
read and re-emitted in its JavaScript meaning, and what ``re`` cannot express is refused.

``^`` and ``$`` always match at line boundaries and ``.`` never crosses a line terminator
(``\\n``, ``\\r``, U+2028, U+2029), as in a JavaScript regex with the ``m`` flag.

The translation runs on the third-party ``regex`` engine (its ``re``-compatible VERSION0 mode),
not on ``re``: a client's pattern can backtrack for ever (``(a+)+$`` on a long line of ``a``),
and only ``regex`` can stop a match after a time (``timeout=``) and match without holding the
interpreter (``concurrent=True``), so the server keeps answering meanwhile. See :func:`matches`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from fsmcp import ErrorCode, ToolError

_TERMINATORS = "\n\r\u2028\u2029"
_WORD = "A-Za-z0-9_"
_DIGIT = "0-9"
_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_SETS = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
# Scoped case-sensitivity: under re.IGNORECASE, [A-Za-z] would also take U+017F and U+212A.
_W = f"(?-i:[{_WORD}])"
_ANY = "(?s:.)"
_QUANT = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_SIMPLE = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def invalid(message: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_PARAMS, message)


@dataclass(frozen=True)
class JsRegex:
    """A translated pattern with what a replacement template needs to know about it."""

    source: str
    compiled: Any  # a regex.Pattern
    groups: int
    names: frozenset[str]

    def matches(self, text: str, start: int, end: int) -> Iterator[Any]:
        """The matches in ``text[start:end]``; TIMEOUT when matching takes more than MATCH_SECONDS."""
        try:
            yield from self.compiled.finditer(text, start, end, timeout=MATCH_SECONDS, concurrent=True)
        except TimeoutError:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"the regex {self.source!r} took more than {MATCH_SECONDS:g} s of matching and was stopped (nested "
                "repeats such as (a+)+ backtrack without end on text that almost matches). "
                "Simplify it (a+ instead of (a+)+), anchor it, or narrow startLine/endLine",
            ) from None


MATCH_SECONDS = 2.0
"""How long one regex edit may match before it is stopped with TIMEOUT."""


def compile_js(source: str, *, ignore_case: bool = False, dot_all: bool = False) -> JsRegex:
    """Translate and compile an ECMAScript pattern; INVALID_PARAMS when it is not valid."""
    groups, names = _count_groups(source)
    python = _Translator(source, groups, names, dot_all).run()
    try:
        compiled = regex.compile(python, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))
    except (OverflowError, RecursionError) as exc:
        raise invalid(f"invalid regex {source!r}: too large to compile ({exc}); use smaller repeat counts or less nesting") from None
    except regex.error as exc:
        raise invalid(f"invalid regex {source!r}: {exc.msg}") from None
    return JsRegex(source, compiled, groups, frozenset(names))


def _count_groups(source: str) -> tuple[int, list[str]]:
    """Capturing groups and group names, in order, skipping escapes and classes."""
    count, names, i, in_class = 0, [], 0, False
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            if not source.startswith("?", i + 1):
                count += 1
            elif source.startswith("?<", i + 1) and not source.startswith(("?<=", "?<!"), i + 1):
                count += 1
                end = source.find(">", i)
                names.append(source[i + 3 : end] if end > 0 else "")
        i += 1
    return count, names


def _char(c: str) -> str:
    """One character as a pattern atom that means just that character, in a class or out."""
    if c.isascii() and c.isalnum():
        return c
    code = ord(c)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class _Translator:
    def __init__(self, source: str, groups: int, names: list[str], dot_all: bool):
        self.src = source
        self.i = 0
        self.groups = groups
        self.names = names
        self.dot_all = dot_all

    def error(self, what: str) -> ToolError:
        return invalid(f"invalid regex {self.src!r} at position {self.i}: {what}")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.src[j] if j < len(self.src) else ""

    def run(self) -> str:
        out: list[str] = []
        depth = 0
        quantifiable = False
        while self.i < len(self.src):
            c = self.src[self.i]
            if c in "*+?" or (c == "{" and _QUANT.match(self.src, self.i)):
                if not quantifiable:
                    raise self.error(f"nothing to repeat before {c!r}")
                out.append(self.quantifier())
                quantifiable = False
                continue
            self.i += 1
            quantifiable = True
            if c == "\\":
                atom, quantifiable = self.escape()
                out.append(atom)
            elif c == "[":
                out.append(self.char_class())
            elif c == "(":
                out.append(self.group_open())
                depth += 1
                quantifiable = False
            elif c == ")":
                if depth == 0:
                    raise self.error("unmatched ')'")
                depth -= 1
                out.append(")")
            elif c == "|":
                out.append("|")
                quantifiable = False
            elif c == "^":
                out.append(f"(?<![^{_TERMINATORS}])")
                quantifiable = False
            elif c == "$":
                out.append(f"(?![^{_TERMINATORS}])")
                quantifiable = False
            elif c == ".":
                out.append(_ANY if self.dot_all else f"[^{_TERMINATORS}]")
            else:
                out.append(_char(c))
        if depth:
            raise self.error("missing ')'")
        return "".join(out)

    def quantifier(self) -> str:
        c = self.src[self.i]
        if c == "{":
            m = _QUANT.match(self.src, self.i)
            assert m is not None
            low, comma, high = m.group(1), m.group(2), m.group(3)
            if high and int(high) < int(low):
                raise self.error(f"numbers out of order in {m.group(0)}")
            text = f"{{{int(low)}{',' + (str(int(high)) if high else '') if comma else ''}}}"
            self.i = m.end()
        else:
            text = c
            self.i += 1
        if self.peek() == "?":
            text += "?"
            self.i += 1
        return text

    def group_open(self) -> str:
        if self.peek() != "?":
            return "("
        for js in ("?:", "?=", "?!", "?<=", "?<!"):
            if self.src.startswith(js, self.i):
                self.i += len(js)
                return "(" + js
        if self.peek(1) == "<":
            m = _NAME.match(self.src, self.i + 2)
            if not m or self.src[m.end() : m.end() + 1] != ">":
                raise self.error("a group name must be letters, digits and _ between < and >")
            self.i = m.end() + 1
            return f"(?P<{m.group(0)}>"
        raise self.error("'(?' starts only (?:, (?=, (?!, (?<=, (?<! or (?<name> in ECMAScript; inline flags are not allowed (use caseInsensitive)")

    # -- escapes ------------------------------------------------------------------------------

    def escape(self) -> tuple[str, bool]:
        """The atom for the escape after a backslash outside a class, and whether it repeats."""
        c = self.peek()
        if not c:
            raise self.error("the pattern ends with a lone backslash")
        if c in "dDwWsS":
            self.i += 1
            if c == "w":
                return _W, True
            if c == "W":
                return f"(?-i:[^{_WORD}])", True
            body = _SETS[c.lower()]
            return (f"[{body}]" if c.islower() else f"[^{body}]"), True
        if c in "bB":
            self.i += 1
            boundary = f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))"
            inside = f"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))"
            return (boundary if c == "b" else inside), False
        if c in "123456789":
            return self.backreference(), True
        if c == "k" and self.names:
            m = re.match(r"k<([^>]*)>", self.src[self.i :])
            if not m or m.group(1) not in self.names:
                raise self.error("\\k<name> must name a group of the pattern")
            self.i += m.end()
            name = m.group(1)
            return f"(?({name})(?P={name}))", True
        return _char(self.char_escape()), True

    def backreference(self) -> str:
        m = re.match(r"[0-9]+", self.src[self.i :])
        assert m is not None
        number = int(m.group(0))
        if number > self.groups:
            raise self.error(f"\\{number} refers to group {number}, but the pattern has {self.groups} capturing group(s)")
        self.i += m.end()
        # JavaScript matches a group that did not take part as empty; re would fail the match.
        return f"(?({number})\\{number})"

    def char_escape(self) -> str:
        """The single character an escape stands for (the backslash already consumed)."""
        c = self.src[self.i]
        self.i += 1
        if c in _SIMPLE:
            return _SIMPLE[c]
        if c == "0":
            m = re.match(r"[0-7]{0,2}", self.src[self.i :])
            digits = m.group(0) if m else ""
            self.i += len(digits)
            return chr(int("0" + digits, 8))
        if c == "c":
            if not (self.peek().isascii() and self.peek().isalpha()):
                raise self.error("\\c must be followed by a letter (\\cJ is a line feed); write \\\\c for a backslash and c")
            self.i += 1
            return chr(ord(self.src[self.i - 1]) % 32)
        if c == "x":
            m = re.match(r"[0-9A-Fa-f]{2}", self.src[self.i :])
            if m:
                self.i += 2
                return chr(int(m.group(0), 16))
            return "x"
        if c == "u":
            return self.unicode_escape()
        if c in "pP" and self.peek() == "{":
            raise self.error("Unicode property escapes (\\p{…}) are not supported; use a character class such as [A-Za-zÀ-ÿ]")
        return c

    def unicode_escape(self) -> str:
        m = re.match(r"\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{4})", self.src[self.i :])
        if not m:
            return "u"
        self.i += m.end()
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF:
            raise self.error("\\u{…} is beyond U+10FFFF")
        # A UTF-16 surrogate pair written as two escapes is one character, as JavaScript sees it.
        if 0xD800 <= code < 0xDC00:
            low = re.match(r"\\u([Dd][C-Fc-f][0-9A-Fa-f]{2})", self.src[self.i :])
            if low:
                self.i += low.end()
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
        return chr(code)

    # -- classes ------------------------------------------------------------------------------

    def char_class(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        body: list[str] = []
        excluded: list[str] = []
        while True:
            if self.i >= len(self.src):
                raise self.error("missing ']'")
            if self.peek() == "]":
                self.i += 1
                break
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                second = self.class_atom()
                if isinstance(first, str) and isinstance(second, str):
                    if ord(second) < ord(first):
                        raise self.error(f"range out of order in character class ({first!r}-{second!r})")
                    body.append(f"{_char(first)}-{_char(second)}")
                    continue
                # Annex B: a range with a class escape at either end is the two items and a '-'.
                for item in (first, "-", second):
                    self.add_class_item(item, body, excluded)
                continue
            self.add_class_item(first, body, excluded)
        return _class(negated, "".join(body), excluded)

    def class_atom(self) -> str | tuple[str, bool]:
        """A character, or (set body, negated) for \\d \\w \\s and their complements."""
        c = self.src[self.i]
        self.i += 1
        if c != "\\":
            return c
        e = self.peek()
        if not e:
            raise self.error("the pattern ends with a lone backslash")
        if e in "dDwWsS":
            self.i += 1
            return (_SETS[e.lower()], e.isupper())
        if e == "b":
            self.i += 1
            return "\b"
        if e in "123456789":
            # Annex B: inside a class a digit escape is an octal character code.
            m = re.match(r"[0-7]{1,3}", self.src[self.i :])
            if not m:
                self.i += 1
                return e
            self.i += m.end()
            return chr(int(m.group(0), 8) & 0xFF)
        return self.char_escape()

    @staticmethod
    def add_class_item(item: str | tuple[str, bool], body: list[str], excluded: list[str]) -> None:
        if isinstance(item, str):
            body.append(_char(item))
        elif item[1]:
            excluded.append(item[0])
        else:
            body.append(item[0])


def _class(negated: bool, body: str, excluded: list[str]) -> str:
    # re has no set difference, so a class holding \D, \W or \S becomes an alternation.
    alternatives = ([f"[{body}]"] if body else []) + [f"[^{e}]" for e in excluded]
    if not excluded:
        if negated:
            return f"[^{body}]" if body else _ANY
        return f"[{body}]" if body else "(?!)"
    either = "|".join(alternatives)
    return f"(?:(?!{either}){_ANY})" if negated else f"(?:{either})"
