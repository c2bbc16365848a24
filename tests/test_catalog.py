"""The tool list kept between stdio starts: the same answer, never a stale one, never inside a root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fsmcp.run import catalog
from fsmcp.testing import forked
from fsmcp.api.config import Settings
from fsmcp.paths.roots import RootSet

HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}


def start(root: Path, cache: Path, *options: str, calls: list[dict] = (), python: tuple[str, ...] = ()) -> tuple[dict[int, dict], str]:
    """One start of ``fsmcp serve`` fed a file of requests; the answers by id, and stderr."""
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ] + [{"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call", "params": call} for i, call in enumerate(calls)]
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "XDG_STATE_HOME": str(cache.parent / "state")}
    # Forked from the test process's fork server, unless ``python`` options ask for an interpreter of its own.
    argv = [sys.executable, *python, "-m", "fsmcp", "serve", *options, str(root)] if python else forked("serve", *options, str(root))
    done = subprocess.run(
        argv,
        input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    return answers, done.stderr


def kept(cache: Path) -> list[Path]:
    return sorted((cache / "fsmcp" / "tools").glob("*.json"))


def test_a_second_start_answers_from_the_cache_without_loading_a_plugin(root, tmp_path):
    cache = tmp_path / "cache"
    first, _ = start(root, cache)
    assert len(kept(cache)) == 1
    second, stderr = start(root, cache, python=("-X", "importtime"))
    assert second[1]["result"] == first[1]["result"]
    assert second[0]["result"] == first[0]["result"]  # the instructions too
    imported = {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    assert "fsmcp.cli.commands" in imported
    assert not {"pydantic", "anyio", "fsmcp_read", "fsmcp.run.host"} & imported


def test_a_call_after_a_start_from_the_cache_runs_the_real_tool(root, tmp_path):
    cache = tmp_path / "cache"
    start(root, cache)
    answers, _ = start(root, cache, calls=[{"name": "read_file", "arguments": {"path": str(root / "a.txt")}}])
    assert "alpha" in answers[2]["result"]["content"][0]["text"]
    assert not answers[2]["result"].get("isError")


def test_another_setting_is_another_list_never_the_kept_one(root, tmp_path):
    cache = tmp_path / "cache"
    everything, _ = start(root, cache)
    start(root, cache)
    reading, _ = start(root, cache, "--read-only")
    names = {t["name"] for t in reading[1]["result"]["tools"]}
    assert "read_file" in names and "write_file" not in names
    assert "write_file" in {t["name"] for t in everything[1]["result"]["tools"]}
    assert len(kept(cache)) == 2


def test_no_cache_inside_a_root(root):
    cache = root / ".cache"
    journal = ("--journal", str(root.parent / "journal"))  # not beside the cache: a root holding it stops the start
    first, _ = start(root, cache, *journal)
    second, _ = start(root, cache, *journal)
    assert first[1]["result"] == second[1]["result"]
    assert not (root / ".cache").exists()


def test_a_kept_list_that_proves_wrong_at_the_first_call_is_dropped(root, tmp_path):
    # The key covers what defines the tools; should it still miss a change, the first call
    # loads the real plugins, says so, and the next start computes the list afresh.
    cache = tmp_path / "cache"
    truth, _ = start(root, cache)
    [file] = kept(cache)
    entry = json.loads(file.read_text())
    entry["tools"] = entry["tools"][:1]
    file.write_text(json.dumps(entry))
    answers, stderr = start(root, cache, calls=[{"name": "read_file", "arguments": {"path": str(root / "a.txt")}}])
    assert "alpha" in answers[2]["result"]["content"][0]["text"]
    assert "tools/list changed" in stderr
    again, _ = start(root, cache)
    assert again[1]["result"] == truth[1]["result"]


def test_the_key_follows_an_editable_install_and_every_distribution(tmp_path, monkeypatch):
    site, source = tmp_path / "site", tmp_path / "src" / "fsmcp_extra"
    site.mkdir()
    source.mkdir(parents=True)
    (site / "_fsmcp_extra.pth").write_text(f"{source.parent}\n")
    module = source / "tools.py"
    module.write_text("DESCRIPTION = 'one'\n")
    monkeypatch.syspath_prepend(str(site))
    settings = Settings(roots=[str(tmp_path)])
    roots, _ = RootSet.from_specs(settings.roots)
    before = catalog.digest(settings, roots)
    assert catalog.digest(settings, roots) == before
    module.write_text("DESCRIPTION = 'two'\n")  # same size: the modification time tells
    os.utime(module, ns=(module.stat().st_atime_ns, module.stat().st_mtime_ns + 1_000_000))
    edited = catalog.digest(settings, roots)
    assert edited != before
    (site / "fsmcp_extra-0.2.dist-info").mkdir()
    assert catalog.digest(settings, roots) != edited
    assert catalog.digest(Settings(roots=[str(tmp_path)], disable=["read"]), roots) != catalog.digest(settings, roots)
