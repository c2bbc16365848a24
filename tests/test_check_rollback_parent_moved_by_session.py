"""Another session renames the directory a failing call writes in, while the call runs: the
original content the call overwrote is put back, or recorded (list_changes shows it), never lost.

Ordered without timing: the test's ``fsmcp_before_change`` holds the call at ``second.txt`` until
the other session's move_file has answered (or was kept waiting: the wait is bounded by count),
then refuses ``second.txt`` so the call fails and rolls back.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import anyio
import fsmcp_batch.hooks
import fsmcp_history.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

REACHED = threading.Event()
MOVED = threading.Event()
ORIGINAL = b"the original a.txt\n"


class StopsAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if change.tool in ("write_files", "batch_operations") and any(p.path.name == "second.txt" for p in paths):
            REACHED.set()
            for _ in range(3000):  # bounded by count: a lock or the order of changes keeps the move out
                if MOVED.wait(0.01):
                    break
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the call fail")


@pytest.mark.anyio
@pytest.mark.parametrize("journal", ["on", "off"])
@pytest.mark.parametrize("tool", ["write_files", "batch_operations"])
async def test_a_rollback_after_another_session_moved_the_parent_loses_no_content(tmp_path, monkeypatch, journal, tool):
    REACHED.clear()
    MOVED.clear()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = (tmp_path / "root").resolve()
    (root / "d").mkdir(parents=True)
    (root / "d" / "a.txt").write_bytes(ORIGINAL)
    settings = {"journal": str(tmp_path / "journal")} if journal == "on" else {"journal": "off"}
    host = host_for([root], [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("history", fsmcp_history.hooks), ("stops", StopsAtSecond())], **settings)
    first = {"path": "d/a.txt", "content": "the call's a.txt\n"}
    second = {"path": "second.txt", "content": "second\n"}
    arguments = {"files": [first, second]} if tool == "write_files" else {
        "transactional": True, "operations": [{"tool": "write_file", "arguments": first}, {"tool": "write_file", "arguments": second}]}  # fmt: skip
    results = {}
    async with connect(host) as caller, connect(host) as other:

        async def run() -> None:
            results["call"] = await caller.call_tool(tool, arguments)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            for _ in range(3000):
                if REACHED.is_set() or "call" in results:
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), "the call never reached second.txt"
            moved = await other.call_tool("move_file", {"source": "d", "destination": "e"})
            MOVED.set()
        changes = text_of(await other.call_tool("list_changes", {}))
    text = text_of(results["call"])
    holding = [Path(dp) / n for dp, _, ns in os.walk(tmp_path) for n in ns if (Path(dp) / n).read_bytes() == ORIGINAL]
    print(tool, "->", text)
    print("other's move_file ->", text_of(moved))
    print("list_changes:", changes)
    print("files holding the original:", holding)
    assert results["call"].is_error
    in_root = any(p.is_relative_to(root) for p in holding)
    recorded = journal == "on" and bool(holding) and "No changes" not in changes
    named = any(str(p) in text for p in holding)
    assert in_root or recorded or named, "the original a.txt is in neither the root, a change list_changes shows, nor a copy the answer names"
