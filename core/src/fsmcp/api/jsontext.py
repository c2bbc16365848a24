"""JSON text of any depth written, and JSON too deep to parse found before any parser sees it.

``json.dumps`` recurses once per level and fails past Python's recursion limit; :func:`dumps` writes
the same compact text with a loop when the C encoder gives up. Reading is the other way round: a
message or a state file read back nests at most :data:`MAX_NESTING` levels (:func:`too_deep`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any


_encoders: dict[tuple[bool, Callable[[Any], Any] | None], json.JSONEncoder] = {}
"""One encoder per setting: ``json.dumps`` with options builds a new one at every call."""


def dumps(value: Any, *, ascii: bool = False, default: Callable[[Any], Any] | None = str) -> str:
    """``value`` as compact JSON (``,`` and ``:`` separators), at any depth."""
    encoder = _encoders.get((ascii, default))
    if encoder is None:
        encoder = _encoders[ascii, default] = json.JSONEncoder(ensure_ascii=ascii, separators=(",", ":"), default=default)
    try:
        return encoder.encode(value)
    except RecursionError:
        return "".join(_chunks(value, ascii, default))


def _chunks(value: Any, ascii: bool, default: Callable[[Any], Any] | None) -> Iterator[str]:
    def scalar(v: Any) -> str:
        return json.dumps(v, ensure_ascii=ascii, default=default)

    # Each frame: the (key, value) pairs still to write at one level, and what closes it.
    frames: list[tuple[Iterator[tuple[str | None, Any]], str]] = []
    pairs: Iterator[tuple[str | None, Any]] = iter([(None, value)])
    closer, first = "", True
    while True:
        try:
            key, item = next(pairs)
        except StopIteration:
            yield closer
            if not frames:
                return
            (pairs, closer), first = frames.pop(), False
            continue
        if not first:
            yield ","
        first = False
        if key is not None:
            yield scalar(key if isinstance(key, str) else str(key)) + ":"
        if isinstance(item, dict):
            yield "{"
            frames.append((pairs, closer))
            pairs, closer, first = iter(item.items()), "}", True
        elif isinstance(item, (list, tuple)):
            yield "["
            frames.append((pairs, closer))
            pairs, closer, first = ((None, v) for v in item), "]", True
        else:
            yield scalar(item)


MAX_NESTING = 64
"""The deepest arrays and objects may nest in a message. No request of this protocol nests a
tenth as deep; the parsers and the code that walks a message recurse once a level, and the
standard library's parser (the fallback for what orjson refuses) ends the process past ~1,000."""

TOO_DEEP = f"Parse error: arrays and objects nested deeper than {MAX_NESTING} levels (or brackets that do not pair); send at most {MAX_NESTING} levels"

_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))


def too_deep(data: bytes) -> bool:
    """Whether ``data`` nests arrays and objects deeper than :data:`MAX_NESTING`, found before any
    parser sees it. Brackets inside strings do not count; a message with few brackets at all (nearly
    every one) is let through after two counts."""
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return False
    # Outside strings valid JSON has no backslash, and inside them \\ and \" are the only escapes
    # that hide a quote: without them, the quotes left alternate opening and closing strings.
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = b"".join(data.translate(None, _NOT_STRUCTURE).split(b'"')[0::2])
    if len(structure) <= MAX_NESTING:
        return False
    depth = 0
    for byte in structure:
        if byte in b"[{":
            depth += 1
            if depth > MAX_NESTING:
                return True
        else:
            depth -= 1
            if depth < 0:
                return True
    return False

