"""How names and counts are written in messages and listings."""

from __future__ import annotations

import unicodedata


def shown(name: str) -> str:
    """A member name as text: quoted with escapes when it holds control characters or is blank."""
    if not name.strip() or any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in name):
        return repr(name)
    return name


def count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
