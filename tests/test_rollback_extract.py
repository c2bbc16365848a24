"""A failed extract_archive rolls back its own work only: a file another session wrote meanwhile
into the destination the extraction created survives the rollback (no lost update).

Ordered without timing: a path check of the test stops the extraction at its second member until
the other session's write_file has answered, then refuses that member, so the extraction fails
and rolls back after the other session's file is in place.
"""

from __future__ import annotations

import io
import threading
import zipfile

import anyio
import fsmcp_archive.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import Access, hookimpl
from fsmcp.testing import connect, host_for, text_of

REACHED = threading.Event()
WRITTEN = threading.Event()


class StopsAtSecond:
    """Holds the extraction at its member ``second.txt`` until the other session wrote, then refuses it."""

    @hookimpl
    def fsmcp_check_path(self, path, access, named, settings):
        if access is Access.WRITE and path.path.name == "second.txt" and ".fsmcp-extract-" in str(path.path):
            REACHED.set()
            # Bounded by count: when the other write cannot happen meanwhile (a lock), the
            # extraction goes on after this and the test sees the write survive.
            for _ in range(3000):
                if WRITTEN.wait(0.01):
                    break
            return "refused by the test, to make the extraction fail"
        return None


PLUGINS = [("archive", fsmcp_archive.hooks), ("write", fsmcp_write.hooks), ("stops", StopsAtSecond())]


@pytest.mark.anyio
async def test_a_failed_extraction_keeps_what_another_session_wrote_in_its_destination(tmp_path):
    REACHED.clear()
    WRITTEN.clear()
    root = tmp_path.resolve()
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("first.txt", "first\n")
        z.writestr("second.txt", "second\n")
    (root / "a.zip").write_bytes(data.getvalue())
    host = host_for([root], PLUGINS)
    results = {}
    async with connect(host) as extractor, connect(host) as other:

        async def extract() -> None:
            results["extract"] = await extractor.call_tool("extract_archive", {"archive": "a.zip", "destination": "out"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(extract)
            for _ in range(3000):
                if REACHED.is_set():
                    break
                await anyio.sleep(0.01)
            assert REACHED.is_set(), "the extraction never reached its second member"
            written = await other.call_tool("write_file", {"path": "out/theirs.txt", "content": "another session's work\n"})
            WRITTEN.set()
            assert not written.is_error, text_of(written)
    result = results["extract"]
    assert result.is_error, text_of(result)
    print("extract_archive:", text_of(result))
    print("out/ after the rollback:", sorted(p.name for p in (root / "out").iterdir()) if (root / "out").exists() else "gone")
    assert (root / "out" / "theirs.txt").exists(), "the rollback of the failed extraction destroyed another session's file"
    assert (root / "out" / "theirs.txt").read_text() == "another session's work\n"
