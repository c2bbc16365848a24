"""The operator's ``[plugins.archive]`` limits, checked."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from fsmcp import options_error, plugin_options

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
        limits = plugin_options(cls, raw, "archive")
        for field in fields(cls):
            value = getattr(limits, field.name)
            whole = field.name != "max_ratio"
            if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or value < 1:
                kind = "positive integer" if whole else "number of at least 1"
                raise options_error("archive", f"{field.name} must be a {kind}, not {value!r}")
        return limits


def raise_hint(option: str) -> str:
    """How to get past a limit: said in every FILE_TOO_LARGE the limits cause."""
    return f"if the archive is trusted, the operator can raise {option} under [plugins.archive] in fsmcp.toml"
