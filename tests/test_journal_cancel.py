"""A cancelled call is an unfinished change like any other: what it changed is recorded, undoable.

The client cancels a 100-write batch while one of its steps is about to change a file (a hook
holds that step until the server has seen the cancellation), so the cancellation lands at the
worst moment every time, not by chance: the journal is then saving the file's old bytes, and
the batch's change is being finished while its abandoned step still runs.
"""

from __future__ import annotations

import threading
import types
from pathlib import Path

import anyio
import pytest

from fsmcp import hookimpl
from fsmcp.testing import ToolCalls, cancel_when, connect, host_for

FILES = 100
HELD = 50
"""The step the hook holds until the cancellation has arrived."""
ROUNDS = 2000
"""Waits of 10 ms, at most: a generous bound by count, never a time the machine must beat."""


def holder() -> tuple[types.ModuleType, threading.Event]:
    reached = threading.Event()
    plugin = types.ModuleType("holder")

    @hookimpl(tryfirst=True)  # before the journal saves what the step will change
    def fsmcp_before_change(change, paths, fs):
        if not reached.is_set() and any(p.path.name == f"f{HELD:03}.txt" for p in paths):
            reached.set()  # once: the undo announces the file again
            for _ in range(ROUNDS):
                if fs.call.cancelled:
                    return
                threading.Event().wait(0.01)
            raise AssertionError("the cancellation never reached the step")

    plugin.fsmcp_before_change = fsmcp_before_change
    return plugin, reached


@pytest.mark.anyio
@pytest.mark.parametrize("run", range(3))
async def test_a_cancelled_batch_is_recorded_and_undone(tmp_path: Path, run: int):
    root = tmp_path / "root"
    root.mkdir()
    old = {f"f{i:03}.txt": f"old {i}\n" * 50 for i in range(FILES)}
    for name, text in old.items():
        (root / name).write_text(text)
    plugin, reached = holder()
    journal = tmp_path / "journal"
    host = host_for([root], [("holder", plugin)], entry_points=True, journal=str(journal))
    operations = [{"tool": "write_file", "arguments": {"path": name, "content": f"new {name}\n"}} for name in old]
    async with connect(host) as client:
        await cancel_when(client, "batch_operations", {"operations": operations}, reached.is_set, rounds=ROUNDS, what="the batch never reached its held step")
        for _ in range(ROUNDS):
            if not host.runner.in_flight:
                break
            await anyio.sleep(0.01)
        assert not host.runner.in_flight
        now = {p.name: p.read_text() for p in root.iterdir()}
        changed = sum(now[name] != text for name, text in old.items())
        assert 0 < changed < FILES, changed
        assert all(now[name] in (text, f"new {name}\n") for name, text in old.items())
        s = ToolCalls(client)
        listed = await s.ok("list_changes")
        assert listed.count("\n") == 0 and "batch_operations" in listed, listed
        assert "not undoable" not in listed, listed
        await s.ok("undo_change")
    assert {p.name: p.read_text() for p in root.iterdir()} == old
    left = [n for n in (journal / "pending").iterdir() if not n.name.endswith(".lock")]
    assert not left, left
