"""File names in diff headers: timestamps, git's quoting, ``/dev/null`` and ``a/`` ``b/`` prefixes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.\d+)?(?: ([+-])(\d\d)(\d\d))?")
# Searched for at the end alone, the name taken as what lies before it: a pattern holding the
# name too backtracks over every run of blanks, quadratic in a long header line.
_TRAILING_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [+-]\d{4})?$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def header_name(field: str) -> tuple[str | None, str | None]:
    """The name and timestamp of a ``---``/``+++`` line's field; the name is None for /dev/null."""
    if field.startswith('"'):
        name, rest = _unquote_prefix(field)
        stamp = rest.strip() or None
    elif "\t" in field:
        name, stamp = field.split("\t", 1)
    else:
        m = _TRAILING_STAMP.search(field)
        if m and m.start() and field[m.start() - 1] in " \t":
            name, stamp = field[: m.start()].rstrip(" \t"), m.group()
        else:
            name, stamp = field.rstrip(), None
    return (None if name == "/dev/null" else name), stamp


def is_epoch(stamp: str | None) -> bool:
    """Whether a header's timestamp is the epoch, which ``diff -N`` gives a file that is absent."""
    m = _STAMP.match(stamp or "")
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    sign, hh, mm = m.group(7), m.group(8), m.group(9)
    minutes = 0 if sign is None else (1 if sign == "+" else -1) * (int(hh) * 60 + int(mm))
    when = datetime(year, month, day, hour, minute, second, tzinfo=timezone(timedelta(minutes=minutes)))
    return when == _EPOCH


def split_git_names(rest: str) -> tuple[str, str]:
    """The two names of ``diff --git A B``, quoted or not."""
    if rest.startswith('"'):
        first, tail = _unquote_prefix(rest)
        tail = tail.lstrip(" ")
        return first, unquote(tail)
    # Unquoted names may hold spaces; the split is where both halves name the same file.
    for i, ch in enumerate(rest):
        if ch == " " and rest[:i].partition("/")[2] == rest[i + 1:].partition("/")[2]:
            return rest[:i], rest[i + 1:]
    first, _, second = rest.partition(" b/")
    return first, "b/" + second


def strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    """Take off one leading ``a/`` and ``b/``, as ``patch -p1`` does, when the names carry them.

    Both names must carry their prefix; a ``/dev/null`` side does not count against it.
    """
    old_prefixed = old is None or old.startswith("a/")
    new_prefixed = new is None or new.startswith("b/")
    if old_prefixed and new_prefixed and (old or new):
        return (old[2:] if old else None), (new[2:] if new else None)
    return old, new


def unquote(name: str) -> str:
    """A name as git writes it: C-quoted when it holds special characters, else as it is."""
    return _unquote_prefix(name)[0] if name.startswith('"') else name


def _unquote_prefix(text: str) -> tuple[str, str]:
    """The C-quoted string at the start of ``text`` and what follows its closing quote."""
    out = bytearray()
    i = 1
    while i < len(text) and text[i] != '"':
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "01234567":
                digits = re.match(r"[0-7]{1,3}", text[i + 1:]).group(0)
                out.append(int(digits, 8) & 0xFF)
                i += 1 + len(digits)
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt) if nxt.isascii() else 63))
            i += 2
            continue
        out += ch.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape"), text[i + 1:]
