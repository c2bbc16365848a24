"""The change journal and the change hooks: one call is one change, kept across restarts, bounded."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest
from fsmcp import hookimpl
from fsmcp.testing import ToolCalls, connect, host_for, serve_stdio, tree_of


def observer() -> tuple[types.ModuleType, list]:
    seen: list = []
    plugin = types.ModuleType("observer")

    @hookimpl
    def fsmcp_before_change(change, paths):
        seen.append(("before", change.tool, sorted(p.path.name for p in paths)))

    @hookimpl
    def fsmcp_after_change(change, failed):
        seen.append(("after", change.tool, failed, len(change.paths)))
        return "observed."

    plugin.fsmcp_before_change = fsmcp_before_change
    plugin.fsmcp_after_change = fsmcp_after_change
    return plugin, seen


@pytest.mark.anyio
async def test_a_batch_is_one_change_and_a_third_party_observer_sees_it(root: Path):
    plugin, seen = observer()
    host = host_for([root], [("observer", plugin)], entry_points=True)
    async with connect(host) as client:
        s = ToolCalls(client)
        text = await s.ok(
            "batch_operations",
            operations=[
                {"tool": "write_file", "arguments": {"path": "b.txt", "content": "b"}},
                {"tool": "write_file", "arguments": {"path": "b.txt", "content": "bb"}},
                {"tool": "move_file", "arguments": {"source": "a.txt", "destination": "c.txt"}},
            ],
        )
        assert text.endswith("observed.")
        await s.ok("read_file", path="c.txt")
    assert seen == [
        ("before", "batch_operations", ["b.txt"]),
        ("before", "batch_operations", ["a.txt", "c.txt"]),
        ("after", "batch_operations", False, 3),
    ]
    changes = list(host.journal.changes())
    assert [c["tool"] for c in changes] == ["batch_operations"]


@pytest.mark.anyio
async def test_the_caps_hold_oldest_dropped_first(root: Path, tmp_path: Path):
    host = host_for([root], entry_points=True, journal=str(tmp_path / "j"), journal_max_changes=40, journal_max_bytes=3000)
    for i in range(300):
        outcome = await host.runner.run("write_file", {"path": f"f{i % 7}.txt", "content": "x" * (i % 97)})
        assert not hasattr(outcome, "code"), outcome
    changes = list(host.journal.changes())
    assert len(changes) <= 40
    kept = sum(int(name.partition("-")[2]) for name in os.listdir(tmp_path / "j" / "changes"))
    assert kept <= 3000
    assert changes[0]["id"] == 300 and [c["id"] for c in changes] == sorted((c["id"] for c in changes), reverse=True)


@pytest.mark.anyio
async def test_the_journal_survives_a_restart_in_the_state_directory(tmp_path: Path):
    root = tmp_path / "root"
    (root / "tree").mkdir(parents=True)
    (root / "tree" / "f.txt").write_text("kept\n")
    before = tree_of(root)
    async with serve_stdio(str(root)) as client:
        s = ToolCalls(client)
        await s.ok("delete_file", path="tree", recursive=True)
    assert (Path(os.environ["XDG_STATE_HOME"]) / "fsmcp" / "journal" / "changes").is_dir()
    async with serve_stdio(str(root)) as client:
        s = ToolCalls(client)
        [change] = (await client.call_tool("list_changes", {})).structured_content["changes"]
        assert change["tool"] == "delete_file" and not change["thisSession"]
        await s.fail("undo_change", "NOT_FOUND")  # a new server is a new session: an earlier one's change goes back by its id
        await s.ok("undo_change", id=change["id"])
    assert tree_of(root) == before


def test_the_tests_never_write_the_real_state_directory():
    state = os.environ.get("XDG_STATE_HOME", "")
    assert state and not Path(state).is_relative_to(Path.home() / ".local")


@pytest.fixture(scope="module")
def state_of_a_module_fixture() -> str:
    # Set up before any test's own state directory: a module's host (test_properties' world)
    # recovers and writes the journal found here.
    return os.environ.get("XDG_STATE_HOME", "")


def test_a_fixture_wider_than_a_test_never_writes_the_real_state_directory_either(state_of_a_module_fixture: str):
    assert state_of_a_module_fixture and not Path(state_of_a_module_fixture).is_relative_to(Path.home() / ".local")


@pytest.mark.anyio
async def test_a_directory_swapped_for_a_link_after_the_check_gets_nothing_written_outside(root: Path, tmp_path: Path, monkeypatch):
    from fsmcp.builtin import journal_restore as restore

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside\n")
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside\n")
    real_put_back = restore.put_back

    def swapped_first(conf, store, items):
        # The race: the path policy has passed every path; now a directory on the way becomes a link.
        os.rename(root / "sub", tmp_path / "sub-aside")
        os.symlink(outside, root / "sub")
        return real_put_back(conf, store, items)

    host = host_for([root], entry_points=True)
    async with connect(host) as client:
        s = ToolCalls(client)
        await s.ok("delete_file", path="sub/f.txt")
        monkeypatch.setattr(restore, "put_back", swapped_first)
        before = tree_of(outside)
        await s.fail("undo_change", "ACCESS_DENIED")
    assert tree_of(outside) == before
    assert not [n for n in os.listdir(outside) if n.endswith(".fsmcp-tmp")]


@pytest.mark.parametrize("setting", [{"journal_max_bytes": 0}, {"journal_max_changes": "many"}, {"journal": 3}])
def test_a_bad_journal_setting_stops_the_start(setting):
    from fsmcp.api.config import ConfigError, build_settings

    with pytest.raises(ConfigError, match="journal"):
        build_settings(setting, {})
