"""A transactional batch deleted a directory, then failed; meanwhile another session wrote a file at
the deleted directory's place (making the directory again). The rollback keeps the other
session's file and loses none of the deleted tree's files: put back beside it, or kept in a copy
the answer names, or in a change list_changes shows.

Ordered without timing: the test's ``fsmcp_before_change`` holds the batch at its second step
until the other session's write_file has answered (bounded by count), then refuses that step.
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
WRITTEN = threading.Event()
DELETED = b"a file of the deleted tree\n"


class StopsAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if change.tool == "batch_operations" and any(p.path.name == "second.txt" for p in paths):
            REACHED.set()
            for _ in range(3000):  # bounded by count: a lock or the order of changes keeps the write out
                if WRITTEN.wait(0.01):
                    break
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the batch fail")


@pytest.mark.anyio
@pytest.mark.parametrize("journal", ["on", "off"])
async def test_a_rollback_of_a_deleted_tree_whose_place_was_retaken_loses_nothing(tmp_path, monkeypatch, journal):
    REACHED.clear()
    WRITTEN.clear()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = (tmp_path / "root").resolve()
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "sub" / "a.txt").write_bytes(DELETED)
    settings = {"journal": str(tmp_path / "journal")} if journal == "on" else {"journal": "off"}
    host = host_for([root], [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("history", fsmcp_history.hooks), ("stops", StopsAtSecond())], **settings)
    results = {}
    async with connect(host) as batcher, connect(host) as other:

        async def run() -> None:
            results["batch"] = await batcher.call_tool("batch_operations", {"transactional": True, "operations": [
                {"tool": "delete_file", "arguments": {"path": "d", "recursive": True}},
                {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
            ]})  # fmt: skip

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            for _ in range(3000):
                if REACHED.is_set() or "batch" in results:
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), text_of(results["batch"]) if "batch" in results else "never reached"
            written = await other.call_tool("write_file", {"path": "d/theirs.txt", "content": "another session's work\n"})
            WRITTEN.set()
        changes = text_of(await other.call_tool("list_changes", {}))
    text = text_of(results["batch"])
    holding = [Path(dp) / n for dp, _, ns in os.walk(tmp_path) for n in ns if (Path(dp) / n).read_bytes() == DELETED]
    print("batch ->", text)
    print("other's write_file ->", text_of(written))
    print("list_changes:", changes)
    print("root after:", sorted(str(Path(dp, n).relative_to(root)) for dp, ds, ns in os.walk(root) for n in ds + ns))
    print("files holding the deleted tree's a.txt:", holding)
    assert results["batch"].is_error
    if not written.is_error:
        assert (root / "d" / "theirs.txt").read_text() == "another session's work\n", "the rollback destroyed another session's file"
    in_root = any(p.is_relative_to(root) for p in holding)
    recorded = journal == "on" and bool(holding) and "No changes" not in changes
    # The deleted tree's saved copy is a tree: naming that copy (a directory in the temporary
    # directory holding the file) names where the file is kept, as naming the file would.
    said = {word.rstrip(".,;:)") for word in text.split()}
    temporary = tmp_path / "tmp"
    named = any(str(p) in text for p in holding) or any(
        str(q) in said for p in holding for q in p.parents if q.is_relative_to(temporary) and q != temporary
    )
    assert in_root or recorded or named, "the deleted tree's a.txt is in neither the root, a change list_changes shows, nor a copy the answer names"
