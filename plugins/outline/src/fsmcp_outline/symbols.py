"""What every language's reader yields: one definition, where it lies, how it is called."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Symbol:
    kind: str  # class, def, method, heading, type, interface, ...
    qualname: tuple[str, ...]  # ("Class", "method")
    signature: str  # one line, as a reader would write the head of it
    start: int  # 1-based, decorators included
    end: int  # inclusive
    # leading parts of the name that are no nesting: Go's receiver (`Server.Close`), C++'s `Shape::area`
    outer: int = 0

    @property
    def name(self) -> str:
        return ".".join(self.qualname)

    @property
    def depth(self) -> int:
        return len(self.qualname) - self.outer


def one_line(text: str, limit: int = 160) -> str:
    """Whitespace runs as one space, cut at ``limit`` with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
