"""A cancelled extract_archive rolls back its own work only: a file another session wrote
meanwhile into the destination the extraction created survives (no lost update). The same
break as test_rollback_extract, reached by a client's cancellation instead of a veto.

Ordered without timing: a ``fsmcp_before_change`` of the test holds the extraction at its second
member until the other session's write_file answered and the call is seen cancelled.
"""

from __future__ import annotations

import io
import threading
import zipfile

import anyio
import fsmcp_archive.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of

REACHED = threading.Event()
WRITTEN = threading.Event()
SAW_CANCEL = threading.Event()
ENDED = threading.Event()


class SaysWhenItEnds:
    """Sets ENDED once the extraction's tool has stopped (its rollback done), cancelled or not."""

    @hookimpl
    def fsmcp_after_change(self, change, failed, fs, settings):
        if change.tool == "extract_archive":
            ENDED.set()


class HoldsAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if change.tool == "extract_archive" and any(p.path.name == "second.txt" for p in paths):
            REACHED.set()
            for _ in range(3000):  # bounded by count
                if WRITTEN.is_set() and fs.call.cancelled:
                    SAW_CANCEL.set()
                    break
                threading.Event().wait(0.01)


@pytest.mark.anyio
async def test_a_cancelled_extraction_keeps_what_another_session_wrote_in_its_destination(tmp_path):
    for e in (REACHED, WRITTEN, SAW_CANCEL, ENDED):
        e.clear()
    root = tmp_path.resolve()
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("first.txt", "first\n")
        z.writestr("second.txt", "second\n" * 100_000)
    (root / "a.zip").write_bytes(data.getvalue())
    host = host_for([root], [("archive", fsmcp_archive.hooks), ("write", fsmcp_write.hooks), ("holds", HoldsAtSecond()), ("ends", SaysWhenItEnds())])
    async with connect(host) as extractor, connect(host) as other:
        scope = anyio.CancelScope()

        async def extract() -> None:
            with scope:
                await extractor.call_tool("extract_archive", {"archive": "a.zip", "destination": "out"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(extract)
            for _ in range(3000):
                if REACHED.is_set():
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), "the extraction never reached its second member"
            written = await other.call_tool("write_file", {"path": "out/theirs.txt", "content": "another session's work\n"})
            assert not written.is_error, text_of(written)
            WRITTEN.set()
            scope.cancel()
        for _ in range(3000):  # the extraction's call ends (and rolls back) after the cancellation
            if ENDED.is_set():
                break
            await anyio.sleep(0.01)
    assert SAW_CANCEL.is_set(), "the server never saw the call cancelled"
    assert ENDED.is_set(), "the extraction's call never ended"
    print("out/:", sorted(p.name for p in (root / "out").iterdir()) if (root / "out").exists() else "gone")
    assert (root / "out" / "theirs.txt").read_text() == "another session's work\n"
