"""A failed call's rollback puts back only what the call itself changed: a file another session
wrote after the call had saved it, but before the call got to it, survives the rollback.

Ordered without timing: a ``fsmcp_before_change`` of the test holds the call before it writes
``second.txt`` until the other session's write_file of ``target.txt`` answered (or was kept out
by a lock: the wait is bounded by count), then refuses ``second.txt`` so the call fails.
"""

from __future__ import annotations

import io
import threading
import zipfile

import anyio
import fsmcp_archive.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

REACHED = threading.Event()
WRITTEN = threading.Event()


class StopsAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if change.tool in ("extract_archive", "write_files") and any(p.path.name == "second.txt" for p in paths):
            REACHED.set()
            for _ in range(500):  # bounded by count: a lock that keeps the other write out ends the wait
                if WRITTEN.wait(0.01):
                    break
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the call fail")


async def race(root, name, arguments):
    host = host_for([root], [("archive", fsmcp_archive.hooks), ("write", fsmcp_write.hooks), ("stops", StopsAtSecond())])
    results = {}
    async with connect(host) as caller, connect(host) as other:

        async def run() -> None:
            results["call"] = await caller.call_tool(name, arguments)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            for _ in range(3000):
                if REACHED.is_set() or "call" in results:
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), text_of(results["call"]) if "call" in results else "never reached"
            written = await other.call_tool("write_file", {"path": "d/target.txt", "content": "another session's work\n"})
            WRITTEN.set()
    return results["call"], written


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["extract_archive", "write_files"])
async def test_a_rollback_keeps_a_file_another_session_wrote_before_the_call_got_to_it(tmp_path, tool):
    REACHED.clear()
    WRITTEN.clear()
    root = tmp_path.resolve()
    (root / "d").mkdir()
    (root / "d" / "target.txt").write_text("old\n")
    (root / "d" / "second.txt").write_text("old second\n")
    if tool == "extract_archive":
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w") as z:
            z.writestr("second.txt", "second\n")
            z.writestr("target.txt", "from the archive\n")
        (root / "a.zip").write_bytes(data.getvalue())
        arguments = {"archive": "a.zip", "destination": "d", "overwrite": True}
    else:
        arguments = {"files": [{"path": "d/second.txt", "content": "second\n"}, {"path": "d/target.txt", "content": "mine\n"}]}
    result, written = await race(root, tool, arguments)
    print(tool, "->", text_of(result))
    print("other's write_file ->", text_of(written))
    print("d/target.txt after the rollback:", (root / "d" / "target.txt").read_text())
    assert result.is_error
    if not written.is_error:
        assert (root / "d" / "target.txt").read_text() == "another session's work\n", "the rollback put back the old file over another session's"
