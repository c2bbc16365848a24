"""JSON text of any depth: a tree 1,000 directories deep is data like any other.

``json.dumps`` recurses once per level and fails past Python's recursion limit; this writes the
same compact text with a loop when the C encoder gives up.
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
