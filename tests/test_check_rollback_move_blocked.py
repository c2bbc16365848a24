"""A transactional batch moved a file, then failed; its rollback cannot put the file back where it
came from (that directory went read-only meanwhile). The moved content must survive: left where
the batch moved it, or kept in a copy the answer names, or in a change list_changes shows.

Ordered without timing: the test's ``fsmcp_before_change`` puts a read-only bind mount over the
source's directory when the batch reaches its second step, then refuses that step.
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

MOVED = b"the moved file's content\n"


class BlocksAtSecond:
    def __init__(self, directory: Path, mounts: list[Path]):
        self.directory, self.mounts = directory, mounts
        self.blocked = False

    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if any(p.path.name == "second.txt" for p in paths):
            subprocess.run(["mount", "--bind", str(self.directory), str(self.directory)], check=True)
            self.mounts.append(self.directory)
            subprocess.run(["mount", "-o", "remount,bind,ro", str(self.directory)], check=True)
            self.blocked = True
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the batch fail")


def _holding(top: Path) -> list[Path]:
    return [Path(dp) / n for dp, _, ns in os.walk(top) for n in ns if not (Path(dp) / n).is_symlink() and (Path(dp) / n).read_bytes() == MOVED]


@pytest.mark.anyio
@pytest.mark.parametrize("journal", ["on", "off"])
@pytest.mark.parametrize("device", ["same", "other"])
async def test_a_rollback_that_cannot_move_a_file_back_keeps_its_content(tmp_path, monkeypatch, journal, device):
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = (tmp_path / "root").resolve()
    (root / "d").mkdir(parents=True)
    (root / "e").mkdir()
    (root / "d" / "a.txt").write_bytes(MOVED)
    mounts: list[Path] = []
    try:
        if device == "other":
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root / "e")], check=True)
            mounts.append(root / "e")
        hook = BlocksAtSecond(root / "d", mounts)
        settings = {"journal": str(tmp_path / "journal")} if journal == "on" else {"journal": "off"}
        host = host_for([root], [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("history", fsmcp_history.hooks), ("blocks", hook)], **settings)
        async with connect(host) as client:
            result = await client.call_tool("batch_operations", {"transactional": True, "operations": [
                {"tool": "move_file", "arguments": {"source": "d/a.txt", "destination": "e/a.txt"}},
                {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
            ]})  # fmt: skip
            changes = text_of(await client.call_tool("list_changes", {}))
        text = text_of(result)
        holding = _holding(tmp_path)
        print("batch ->", text)
        print("list_changes:", changes)
        print("files holding the moved content:", holding)
    finally:
        for m in reversed(mounts):
            subprocess.run(["umount", "-l", str(m)], check=False)
    assert hook.blocked, "the batch never reached its second step"
    assert result.is_error, text
    in_root = [p for p in holding if p.is_relative_to(root)]
    recorded = journal == "on" and changes != "No changes in the journal." and holding
    named = any(str(p) in text for p in holding) or ("fsmcp-snapshot" in text and any("fsmcp-snapshot" in str(p) for p in holding))
    assert in_root or recorded or named, "the moved file's content is in neither the root, a change list_changes shows, nor a copy the answer names"
