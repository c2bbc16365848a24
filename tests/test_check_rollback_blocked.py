"""A failed call whose rollback itself meets a directory gone read-only, or a full disk, destroys no
content: what it cannot put back stays recorded so that it can be undone (list_changes shows the
change), or, without a journal, the answer names where the content is kept; and it is not told that
nothing changed.

Ordered without timing: the test's ``fsmcp_before_change`` makes ``d`` read-only (a read-only bind
mount over it) or fills its disk (a small tmpfs) when the call reaches ``second.txt``, then refuses
that file, so the call fails and rolls back into the blocked directory.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import fsmcp_batch.hooks
import fsmcp_history.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

ORIGINAL = b"the original a.txt, " + b"x" * 200_000 + b"\n"


class BlocksAtSecond:
    def __init__(self, block):
        self.block = block
        self.blocked = False

    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if any(p.path.name == "second.txt" for p in paths):
            self.block()
            self.blocked = True
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the call fail")


def _mount(*argv: str) -> None:
    done = subprocess.run(["mount", *argv], capture_output=True, text=True)
    assert done.returncode == 0, f"the test needs to mount ({' '.join(argv)}): {done.stderr}"


def _files_holding(top: Path, content: bytes) -> list[Path]:
    found = []
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            p = Path(dirpath) / name
            if not p.is_symlink() and p.is_file() and p.read_bytes() == content:
                found.append(p)
    return found


WRITE_FILES = {"files": [{"path": "d/a.txt", "content": "the call's a.txt\n"}, {"path": "second.txt", "content": "second\n"}]}
BATCH_DELETE = {"transactional": True, "operations": [
    {"tool": "delete_file", "arguments": {"path": "d/a.txt"}},
    {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
]}  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize("journal", ["on", "off"])
@pytest.mark.parametrize("tool", ["write_files", "batch_operations"])
@pytest.mark.parametrize("blocked", ["read-only", "full"])
async def test_a_rollback_into_a_blocked_directory_destroys_no_content(tmp_path, monkeypatch, journal, tool, blocked):
    # The server's temporary directory (where a rollback keeps its saved copies) is the test's own, to be searched.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = (tmp_path / "root").resolve()
    d = root / "d"
    d.mkdir(parents=True)
    mounts = []
    if blocked == "full":
        _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(d))
        mounts.append(d)
    (d / "a.txt").write_bytes(ORIGINAL)

    def block() -> None:
        if blocked == "read-only":
            _mount("--bind", str(d), str(d))
            mounts.append(d)
            _mount("-o", "remount,bind,ro", str(d))
        else:
            fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while True:
                    os.write(fd, b"\0" * 4096)
            except OSError:
                pass  # full
            finally:
                os.close(fd)

    hook = BlocksAtSecond(block)
    settings = {"journal": str(tmp_path / "journal")} if journal == "on" else {"journal": "off"}
    load = [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("history", fsmcp_history.hooks), ("blocks", hook)]
    try:
        host = host_for([root], load, **settings)
        async with connect(host) as client:
            result = await client.call_tool(tool, WRITE_FILES if tool == "write_files" else BATCH_DELETE)
            changes = text_of(await client.call_tool("list_changes", {}))
        text = text_of(result)
        holding = _files_holding(tmp_path, ORIGINAL)
        print(tool, "->", text)
        print("list_changes:", changes)
        print("d/a.txt holds the original:", (d / "a.txt").exists() and (d / "a.txt").read_bytes() == ORIGINAL, "; starts with:", (d / "a.txt").read_bytes()[:30] if (d / "a.txt").exists() else "absent")
        print("files holding the original:", holding)
    finally:
        for m in reversed(mounts):
            subprocess.run(["umount", "-l", str(m)], check=False)
    assert hook.blocked, "the call never reached second.txt"
    assert result.is_error, text
    put_back = any(p == d / "a.txt" for p in holding)
    recorded = journal == "on" and changes != "No changes in the journal." and holding
    # Named: its path, or the snapshot directories' pattern the answer gives when a copy is there.
    named = any(str(p) in text for p in holding) or ("fsmcp-snapshot-" in text and any("fsmcp-snapshot-" in str(p) for p in holding))
    assert put_back or "nothing was changed" not in text, "the answer says nothing was changed, but d/a.txt no longer holds the original"
    assert put_back or recorded or named, "the original a.txt was not put back, is in no change list_changes shows, and the answer names no place that keeps it"
