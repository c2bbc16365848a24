"""How a file name is written in anything the server says, and read back when a client gives it.

One rule for every tool, so a name copied from any output reaches the file:

- a byte that is not UTF-8 (held by Python as a lone surrogate) is ``\\xNN`` (NN ≥ 80);
- a control character is ``\\xNN`` below 0x80 (newline ``\\x0a``, DEL ``\\x7f``), else ``\\uNNNN``
  (C1 controls, the line and paragraph separators, the bidirectional overrides), so a name can
  neither break a line of output nor reorder what is shown around it;
- a backslash that would otherwise read as one of these escapes (``\\x…``, ``\\u…``, ``\\\\``)
  is doubled.

:func:`given` undoes exactly that, for every path a tool receives; a backslash in any other
place is kept as written.
"""

from __future__ import annotations

import re

_BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_ESCAPED = {*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *_BIDI}
_NEEDS = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069\udc80-\udcff]|\\\\(?=[\\\\xu])")
_ESCAPE = re.compile(r"\\(?:\\|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4}))")


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    n = ord(c)
    if c == "\\":
        return "\\\\"
    if 0xDC80 <= n <= 0xDCFF:
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x80 else f"\\u{n:04x}"


def shown(name: str) -> str:
    """``name`` (or a whole path) as it is written in output: always valid UTF-8, one line."""
    return _NEEDS.sub(_escape, name)


def _unescape(match: re.Match[str]) -> str:
    byte, code = match.group(1), match.group(2)
    if byte is not None:
        n = int(byte, 16)
        if n >= 0x80:
            return chr(0xDC00 + n)  # the undecodable byte itself, as os.fsdecode holds it
        return chr(n) if n in _ESCAPED else match.group()
    if code is not None:
        n = int(code, 16)
        return chr(n) if n >= 0x80 and n in _ESCAPED else match.group()
    return "\\"


def given(raw: str) -> str:
    """A path as a client wrote it, with :func:`shown`'s escapes turned back into what they stand for."""
    return _ESCAPE.sub(_unescape, raw) if "\\" in raw else raw


def echoed(raw: str) -> str:
    """A path a client gave, quoted for a message: escapes as the client may have written them, once."""
    return f"'{shown(given(raw))}'"
