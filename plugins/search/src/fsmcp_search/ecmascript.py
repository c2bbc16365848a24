"""ECMAScript regex syntax rewritten for ripgrep's engine (Rust ``regex``), or refused.

The two dialects mostly agree. Where they differ this module makes the JavaScript meaning
win: ``\\d``, ``\\w`` and ``\\b`` are ASCII-only (Rust's are Unicode), ``[`` inside a class and
a ``{`` that is no quantifier are literal, ``\\<`` is the character ``<`` (a word boundary to
Rust), ``[^]`` is any character. What Rust cannot do at all — lookaround, backreferences — is
refused by name with ``INVALID_PARAMS`` rather than silently searched for something else, and
so is an escape that JavaScript reads as a plain letter (``\\A``, ``\\z``, ``\\h``): whoever
wrote one meant an engine feature this dialect does not have.
"""

from __future__ import annotations

import re

from fsmcp import ErrorCode, ToolError

_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_BRACED_HEX = re.compile(r"\{([0-9A-Fa-f]{1,6})\}")
_PROPERTY = re.compile(r"\{[A-Za-z0-9_=]+\}|[A-Za-z]")
_GROUP_NAME = re.compile(r"<[A-Za-z_$][A-Za-z0-9_$]*>")
_MODIFIERS = re.compile(r"[ims]*(?:-[ims]+)?(?=[:)])")

_OUTSIDE = {"d": "[0-9]", "D": "[^0-9]", "w": "[0-9A-Za-z_]", "W": "[^0-9A-Za-z_]", "s": r"\s", "S": r"\S",
            "b": r"(?-u:\b)", "B": r"(?-u:\B)"}  # fmt: skip
_INSIDE = {"d": "0-9", "D": "[^0-9]", "w": "0-9A-Za-z_", "W": "[^0-9A-Za-z_]", "s": r"\s", "S": r"\S"}
_CONTROL = {"t": "\t", "r": "\r", "v": "\v", "f": "\f"}

_UNSUPPORTED_ADVICE = "search for a broader pattern and read the matches (contextLines shows what surrounds them)"


def _refuse(pattern: str, what: str, advice: str = _UNSUPPORTED_ADVICE) -> ToolError:
    return ToolError(ErrorCode.INVALID_PARAMS, f"regex {pattern!r}: {what}; {advice}")


def _char(c: str) -> str:
    # Escaping every non-alphanumeric character sidesteps all differences in what is special.
    return c if c.isalnum() or c == "_" else f"\\x{{{ord(c):X}}}"


class _Translator:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.out: list[str] = []

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                kind, text = self._escape(in_class=False)
                self.out.append(_char(text) if kind == "char" else text)
            elif c == "[":
                self._class()
            elif c == "(":
                self._group()
            elif c == "{":
                quantifier = _QUANTIFIER.match(p, self.i)
                if quantifier:
                    self.out.append(quantifier.group())
                    self.i = quantifier.end()
                else:
                    self.out.append(_char("{"))
                    self.i += 1
            elif c in "}]":
                self.out.append(_char(c))
                self.i += 1
            elif c in "\n\r":
                raise self._line_break()
            else:
                self.out.append(c if c.isprintable() else _char(c))
                self.i += 1
        return "".join(self.out)

    def _line_break(self) -> ToolError:
        return _refuse(self.p, "a line break cannot match, because grep_files searches one line at a time", "search for the text of one line")

    def _escape(self, *, in_class: bool) -> tuple[str, str]:
        """The escape at ``self.i``: ``("char", c)`` for one character, ``("set", text)`` otherwise."""
        p, start = self.p, self.i
        if start + 1 >= len(p):
            raise _refuse(p, "it ends with a lone backslash", "escape a backslash as \\\\")
        c = p[start + 1]
        self.i = start + 2
        if c in _INSIDE and in_class:
            return "set", _INSIDE[c]
        if c in _OUTSIDE and not in_class:
            return "set", _OUTSIDE[c]
        if c == "b":  # [\b] is a backspace
            return "char", "\b"
        if c in _CONTROL:
            return "char", _CONTROL[c]
        if c == "n":
            raise self._line_break()
        if c == "0" and not (self.i < len(p) and p[self.i].isdigit()):
            return "char", "\0"
        if c.isdigit():
            raise _refuse(p, f"\\{c} is a backreference (or an octal escape), which ripgrep's engine does not support")
        if c == "k" and p.startswith("<", self.i):
            raise _refuse(p, "\\k<name> is a backreference, which ripgrep's engine does not support")
        if c == "x" and _HEX2.match(p, self.i):
            self.i += 2
            return "char", chr(int(p[self.i - 2 : self.i], 16))
        if c == "u":
            return "char", self._unicode_escape()
        if c == "c" and self.i < len(p) and p[self.i].isascii() and p[self.i].isalpha():
            self.i += 1
            return "char", chr(ord(p[self.i - 1]) % 32)
        if c in "pP":
            prop = _PROPERTY.match(p, self.i)
            if prop:
                self.i = prop.end()
                return "set", f"\\{c}{prop.group()}"
        if c.isalnum():
            raise _refuse(
                p,
                f"\\{c} is not an ECMAScript escape (JavaScript reads it as the letter {c})",
                f"write {c} for the letter; for line anchors use ^ and $",
            )
        return "char", c

    def _unicode_escape(self) -> str:
        p = self.p
        braced = _BRACED_HEX.match(p, self.i)
        if braced:
            self.i = braced.end()
            code = int(braced.group(1), 16)
        elif _HEX4.match(p, self.i):
            code = int(p[self.i : self.i + 4], 16)
            self.i += 4
            low = _HEX4.match(p, self.i + 2) if p.startswith("\\u", self.i) else None
            if 0xD800 <= code < 0xDC00 and low and 0xDC00 <= int(low.group(), 16) < 0xE000:
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
                self.i = low.end()
        else:
            raise _refuse(p, "\\u must be followed by four hex digits or {hex}", "write \\u00e9 or \\u{1F600}")
        if 0xD800 <= code < 0xE000 or code > 0x10FFFF:
            raise _refuse(p, f"\\u{code:X} is a lone surrogate or not a Unicode code point", "search for the whole character")
        return chr(code)

    def _class(self) -> None:
        p = self.p
        self.i += 1
        negated = p.startswith("^", self.i)
        if negated:
            self.i += 1
        if p.startswith("]", self.i):  # JavaScript: [] matches nothing, [^] any character
            self.i += 1
            self.out.append(r"(?s:.)" if negated else r"[^\x00-\x{10FFFF}]")
            return
        items: list[str] = []
        while True:
            if self.i >= len(p):
                raise _refuse(p, "a character class '[' is never closed", "close it with ], or write \\[ for the character")
            if p[self.i] == "]":
                self.i += 1
                break
            kind, first = self._class_atom()
            is_range = kind == "char" and p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]"
            if not is_range:
                items.append(_char(first) if kind == "char" else first)
                continue
            self.i += 1
            kind2, last = self._class_atom()
            if kind2 != "char":  # JavaScript reads [a-\d] as a, -, and digits
                items += [_char(first), _char("-"), last]
            elif ord(last) < ord(first):
                raise _refuse(p, f"the class range {first}-{last} is out of order", "write the smaller character first")
            else:
                items.append(f"{_char(first)}-{_char(last)}")
        self.out.append(("[^" if negated else "[") + "".join(items) + "]")

    def _class_atom(self) -> tuple[str, str]:
        if self.p[self.i] == "\\":
            return self._escape(in_class=True)
        c = self.p[self.i]
        if c in "\n\r":
            raise self._line_break()
        self.i += 1
        return "char", c

    def _group(self) -> None:
        p = self.p
        if not p.startswith("(?", self.i):
            self.out.append("(")
            self.i += 1
            return
        rest = p[self.i + 2 :]
        if rest.startswith(("=", "!")):
            raise _refuse(p, f"lookahead '{p[self.i:self.i + 3]}' is not supported by ripgrep's engine")
        if rest.startswith(("<=", "<!")):
            raise _refuse(p, f"lookbehind '{p[self.i:self.i + 4]}' is not supported by ripgrep's engine")
        name = _GROUP_NAME.match(rest)
        if name:  # names only matter to backreferences, which are refused anyway
            self.out.append("(")
            self.i += 2 + name.end()
            return
        if rest.startswith(":"):
            self.out.append("(?:")
            self.i += 3
            return
        modifiers = _MODIFIERS.match(rest)
        if modifiers and modifiers.group():
            end = modifiers.end() + 1
            self.out.append("(?" + rest[:end])
            self.i += 2 + end
            return
        raise _refuse(
            p,
            f"'{p[self.i:self.i + 3]}' does not start a group ECMAScript knows",
            "use (...) or (?:...), (?<name>...) for a named group, (?i:...) to ignore case in part of the pattern",
        )


def to_ripgrep(pattern: str) -> str:
    """``pattern`` (ECMAScript syntax) in ripgrep's syntax; INVALID_PARAMS for what it cannot do."""
    return _Translator(pattern).run()
