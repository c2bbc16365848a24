"""``fsmcp serve`` on stdio checks the server's places and tidies up after a killed server once a
start: before the cached tool list can answer (``catalog.py``), and not again when the host's
plugins load, at start-up or at the first call."""

from __future__ import annotations

import pytest

from fsmcp.api.config import build_settings
from fsmcp.cli import commands
from fsmcp.paths import state, temporaries
from fsmcp.serve import stdio


@pytest.fixture
def counted(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    counts = {"sweep": 0, "journal": 0, "served": 0}
    counts["hosts"] = []

    def counting(name, function):
        def counted(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)

        return counted

    monkeypatch.setattr(temporaries, "sweep", counting("sweep", temporaries.sweep))
    monkeypatch.setattr(state, "prepare", counting("journal", state.prepare))

    async def serve(host):
        host.runner  # a cached start loads its plugins at the first call: as one would
        counts["served"] += 1
        counts["hosts"].append(type(host).__name__)

    monkeypatch.setattr(stdio, "serve_stdio", serve)
    return counts


def test_a_start_sweeps_once_whether_the_tool_list_is_cached_or_not(tmp_path, counted):
    root = tmp_path / "root"
    root.mkdir()
    settings = build_settings({}, {"roots": [str(root)]})
    seen = []
    for _ in range(2):  # the first start stores the tool list, the second answers from it
        before = dict(counted)
        assert commands._serve_stdio(settings) == 0
        seen.append({k: counted[k] - before[k] for k in ("sweep", "journal", "served")})
    print(seen, counted["hosts"])
    assert counted["hosts"] == ["Host", "DeferredHost"]
    assert seen == [{"sweep": 1, "journal": 1, "served": 1}] * 2
