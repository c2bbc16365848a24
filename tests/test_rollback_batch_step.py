"""A failed transactional batch's rollback never destroys what another session wrote meanwhile:
also a file written into a directory while a step of the batch (extract_archive into it) was
running, which the rollback puts back whole from its saved copy.

Ordered without timing: a ``fsmcp_before_change`` of the test holds the extraction at its second
member until the other session's write_file answered; the batch's next step then fails.
"""

from __future__ import annotations

import io
import threading
import zipfile

import anyio
import fsmcp_archive.hooks
import fsmcp_batch.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of

REACHED = threading.Event()
WRITTEN = threading.Event()


class HoldsAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if change.tool == "batch_operations" and any(p.path.name == "second.txt" for p in paths):
            REACHED.set()
            for _ in range(3000):  # bounded by count: a lock that keeps the other write out ends the wait
                if WRITTEN.wait(0.01):
                    break


@pytest.mark.anyio
async def test_a_rollback_keeps_what_another_session_wrote_in_a_directory_while_a_step_ran(tmp_path):
    REACHED.clear()
    WRITTEN.clear()
    root = tmp_path.resolve()
    (root / "d").mkdir()
    (root / "d" / "old.txt").write_text("old\n")
    (root / "f.txt").write_text("f")
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("first.txt", "first\n")
        z.writestr("second.txt", "second\n")
    (root / "a.zip").write_bytes(data.getvalue())
    host = host_for([root], [("archive", fsmcp_archive.hooks), ("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("holds", HoldsAtSecond())])
    results = {}
    async with connect(host) as batcher, connect(host) as other:

        async def batch() -> None:
            results["batch"] = await batcher.call_tool("batch_operations", {"transactional": True, "operations": [
                {"tool": "extract_archive", "arguments": {"archive": "a.zip", "destination": "d"}},
                {"tool": "write_file", "arguments": {"path": "f.txt", "content": "x", "expectedVersion": "0000000000000000"}},
            ]})  # fmt: skip

        async with anyio.create_task_group() as tg:
            tg.start_soon(batch)
            for _ in range(3000):
                if REACHED.is_set() or "batch" in results:
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), text_of(results["batch"]) if "batch" in results else "never reached"
            written = await other.call_tool("write_file", {"path": "d/theirs.txt", "content": "another session's work\n"})
            WRITTEN.set()
            assert not written.is_error, text_of(written)
    text = text_of(results["batch"])
    print("batch:", text)
    print("d/ after the rollback:", sorted(p.name for p in (root / "d").iterdir()))
    assert text.startswith("EDIT_CONFLICT: Batch stopped at operation 2"), text
    assert (root / "d" / "theirs.txt").read_text() == "another session's work\n", "the rollback destroyed another session's file"
