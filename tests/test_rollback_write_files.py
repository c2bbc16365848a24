"""A failed write_files puts back only what it wrote: a file another session wrote meanwhile into
a directory write_files made survives the rollback (no lost update).

Ordered without timing: a ``fsmcp_before_change`` of the test stops write_files before its second
file until the other session's write_file has answered, then refuses that file (the hook's
documented way to refuse a change), so write_files fails and rolls back after the other file is
in place.
"""

from __future__ import annotations

import threading

import anyio
import fsmcp_write.hooks
import pytest

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

REACHED = threading.Event()
WRITTEN = threading.Event()


class StopsAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if any(p.path.name == "second.txt" for p in paths):
            REACHED.set()
            for _ in range(3000):  # bounded by count: a lock that keeps the other write out ends the wait
                if WRITTEN.wait(0.01):
                    break
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make write_files fail")


PLUGINS = [("write", fsmcp_write.hooks), ("stops", StopsAtSecond())]


@pytest.mark.anyio
async def test_a_failed_write_files_keeps_what_another_session_wrote_in_a_directory_it_made(tmp_path):
    REACHED.clear()
    WRITTEN.clear()
    root = tmp_path.resolve()
    host = host_for([root], PLUGINS)
    results = {}
    async with connect(host) as writer, connect(host) as other:

        async def write() -> None:
            results["write_files"] = await writer.call_tool("write_files", {"files": [
                {"path": "new/first.txt", "content": "first\n"},
                {"path": "second.txt", "content": "second\n"},
            ]})  # fmt: skip

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            for _ in range(3000):
                if REACHED.is_set():
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), "write_files never reached its second file"
            written = await other.call_tool("write_file", {"path": "new/theirs.txt", "content": "another session's work\n"})
            WRITTEN.set()
            assert not written.is_error, text_of(written)
    result = results["write_files"]
    print("write_files:", text_of(result))
    print("new/ after the rollback:", sorted(p.name for p in (root / "new").iterdir()) if (root / "new").exists() else "gone")
    assert result.is_error, text_of(result)
    assert (root / "new" / "theirs.txt").exists(), "the rollback of the failed write_files destroyed another session's file"
    assert (root / "new" / "theirs.txt").read_text() == "another session's work\n"
