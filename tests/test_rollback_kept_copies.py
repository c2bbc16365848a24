"""A rollback that could not put a file back keeps its saved copy (its error names where); with the
journal off that copy is the only one left of the file's content, so the next start of a server
must not delete it as a temporary left behind.

Two processes, one after the other: the first runs a transactional batch whose rollback meets a
directory made read-only (a read-only bind mount the test's ``fsmcp_before_change`` puts over it
when the batch reaches its second step, which it then refuses), and exits; the second is a new
server's start (which tidies up what ended servers left). Both are forked from the fork server
(``forked_python``), sparing each an interpreter's start and the imports.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fsmcp.testing import forked_python

ORIGINAL = b"the original a.txt, the only copy once deleted\n"

FIRST = r'''
import subprocess, sys
import anyio
import fsmcp_batch.hooks, fsmcp_write.hooks
from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

root, d = sys.argv[1], sys.argv[2]

class BlocksAtSecond:
    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if any(p.path.name == "second.txt" for p in paths):
            subprocess.run(["mount", "--bind", d, d], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", d], check=True)
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the call fail")

async def main():
    host = host_for([root], [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("blocks", BlocksAtSecond())], journal="off")
    async with connect(host) as client:
        result = await client.call_tool("batch_operations", {"transactional": True, "operations": [
            {"tool": "delete_file", "arguments": {"path": "d/a.txt"}},
            {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
        ]})
    print(text_of(result))

anyio.run(main)
'''

SECOND = r'''
import sys
from fsmcp.testing import host_for
host_for([sys.argv[1]], journal="off")
print("started")
'''


def _holding(top: Path) -> list[Path]:
    return [Path(dp) / n for dp, _, ns in os.walk(top) for n in ns if (Path(dp) / n).read_bytes() == ORIGINAL]


def test_the_copy_a_rollback_kept_survives_the_next_start(tmp_path):
    root = (tmp_path / "root").resolve()
    d = root / "d"
    d.mkdir(parents=True)
    (d / "a.txt").write_bytes(ORIGINAL)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_STATE_HOME": str(tmp_path / "state")}
    try:
        first = subprocess.run(forked_python(FIRST, str(root), str(d)), env=env, capture_output=True, text=True, timeout=120)
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)
    print("first server's batch:", first.stdout.strip(), first.stderr[-2000:])
    kept = _holding(tmp)
    print("copies of the original after the first server ended:", kept)
    assert first.returncode == 0, first.stderr
    assert "ROLLBACK INCOMPLETE" in first.stdout, first.stdout
    assert not (d / "a.txt").exists()
    assert kept, "the rollback said it kept the saved copy, but there is none in the temporary directory"
    second = subprocess.run(forked_python(SECOND, str(root)), env=env, capture_output=True, text=True, timeout=120)
    print("second server:", second.stdout.strip(), second.stderr[-2000:])
    assert second.returncode == 0, second.stderr
    after = _holding(tmp)
    print("copies of the original after the next start:", after)
    assert after, "the next start deleted the only copy of a.txt, which the rollback had said it kept"
