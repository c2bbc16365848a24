"""How names and counts are written in messages and listings."""

from __future__ import annotations

from fsmcp import shown_name


def shown(name: str) -> str:
    """A member name as text, by the host's rule for names; a blank one quoted, to be seen."""
    return repr(name) if not name.strip() else shown_name(name)


def count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
