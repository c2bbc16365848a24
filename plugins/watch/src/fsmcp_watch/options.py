"""The operator's ``[plugins.watch]`` options, checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsmcp import options_error, plugin_options

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
        opts = plugin_options(cls, raw, "watch")
        if opts.engine not in ENGINES:
            raise options_error("watch", f"engine must be one of {', '.join(ENGINES)}, not {opts.engine!r}")
        for name in ("max_entries", "baseline_entries"):
            value = getattr(opts, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise options_error("watch", f"{name} must be a positive integer, not {value!r}")
        return opts
