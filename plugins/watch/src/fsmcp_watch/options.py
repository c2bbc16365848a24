"""The operator's ``[plugins.watch]`` options, checked."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from fsmcp import ErrorCode, ToolError

ENGINES = ("auto", "notify", "poll")


@dataclass(frozen=True)
class Options:
    engine: str = "auto"
    """auto: notify when it can run here, else polling; notify or poll: that one only."""
    max_entries: int = 10_000
    """The most entries one watch scans; past it FILE_TOO_LARGE."""
    baseline_entries: int = 100_000
    """The most entries all kept baselines hold together; the least recently used go first."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Options:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            _refuse(f"has unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        opts = cls(**raw)
        if opts.engine not in ENGINES:
            _refuse(f"engine must be one of {', '.join(ENGINES)}, not {opts.engine!r}")
        for name in ("max_entries", "baseline_entries"):
            value = getattr(opts, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                _refuse(f"{name} must be a positive integer, not {value!r}")
        return opts


def _refuse(problem: str) -> None:
    raise ToolError(ErrorCode.INTERNAL_ERROR, f"the server's [plugins.watch] configuration {problem}; the operator must fix fsmcp.toml")
