"""The operator's ``[plugins.archive]`` limits, checked."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from fsmcp import ErrorCode, ToolError

RATIO_FLOOR = 1 << 20
"""Bytes a member (or a compressed tar stream) must produce before its ratio is judged: small
files of zeros compress far past any sane ratio and are no bomb."""


@dataclass(frozen=True)
class Limits:
    max_total_bytes: int = 1 << 30
    """The most bytes one extraction writes, all members together."""
    max_members: int = 10_000
    """The most members an archive may hold to be extracted or listed."""
    max_ratio: int | float = 200
    """The most bytes a member may expand to per compressed byte."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Limits:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            _refuse(f"has unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        limits = cls(**raw)
        for name in known:
            value = getattr(limits, name)
            whole = name != "max_ratio"
            if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or value < 1:
                _refuse(f"{name} must be a {'positive integer' if whole else 'number of at least 1'}, not {value!r}")
        return limits


def raise_hint(option: str) -> str:
    """How to get past a limit: said in every FILE_TOO_LARGE the limits cause."""
    return f"if the archive is trusted, the operator can raise {option} under [plugins.archive] in fsmcp.toml"


def _refuse(problem: str) -> None:
    raise ToolError(ErrorCode.INTERNAL_ERROR, f"the server's [plugins.archive] configuration {problem}; the operator must fix fsmcp.toml")
