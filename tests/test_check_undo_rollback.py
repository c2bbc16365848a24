"""A failed undo_change rolls back what it restored, and loses nothing: the contents the undo
replaced are put back, or kept in a change list_changes shows.

Ordered without timing: the test's ``fsmcp_before_change`` acts when the undo reaches its second
file (renames the first file's directory, or nothing), then refuses that file.
"""

from __future__ import annotations

import os
from pathlib import Path

import fsmcp_history.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

NEW_A = b"a.txt as write_files left it\n"
NEW_B = b"b.txt as write_files left it\n"


class StopsUndoAtB:
    def __init__(self, act):
        self.act = act
        self.reached = False

    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if change.tool == "undo_change" and any(p.path.name == "b.txt" for p in paths):
            self.reached = True
            self.act()
            raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the undo fail")


def _holding(top: Path, content: bytes) -> list[Path]:
    return [Path(dp) / n for dp, _, ns in os.walk(top) for n in ns if not (Path(dp) / n).is_symlink() and (Path(dp) / n).read_bytes() == content]


@pytest.mark.anyio
@pytest.mark.parametrize("act", ["nothing", "rename-parent"])
async def test_a_failed_undo_loses_no_content(tmp_path, act):
    root = (tmp_path / "root").resolve()
    (root / "d").mkdir(parents=True)
    (root / "d" / "a.txt").write_text("a.txt before\n")
    (root / "b.txt").write_text("b.txt before\n")
    hook = StopsUndoAtB((lambda: None) if act == "nothing" else (lambda: os.rename(root / "d", root / "e")))
    host = host_for([root], [("write", fsmcp_write.hooks), ("history", fsmcp_history.hooks), ("stops", hook)], journal=str(tmp_path / "journal"))
    async with connect(host) as client:
        written = await client.call_tool("write_files", {"files": [
            {"path": "d/a.txt", "content": NEW_A.decode()}, {"path": "b.txt", "content": NEW_B.decode()}]})  # fmt: skip
        assert not written.is_error, text_of(written)
        undo = await client.call_tool("undo_change", {})
        changes = text_of(await client.call_tool("list_changes", {}))
    text = text_of(undo)
    in_root = {c: [p for p in _holding(tmp_path, c) if p.is_relative_to(root)] for c in (NEW_A, NEW_B)}
    anywhere = {c: _holding(tmp_path, c) for c in (NEW_A, NEW_B)}
    print("undo_change ->", text)
    print("list_changes:", changes)
    print("in the root:", in_root)
    print("anywhere:", anywhere)
    assert hook.reached, "the undo never reached b.txt"
    assert undo.is_error, text
    for content in (NEW_A, NEW_B):
        # In the root (put back), or in the journal with the change listed (undo_change can bring it back).
        assert in_root[content] or (anywhere[content] and "undo_change" in changes), f"{content!r} is neither in the root nor in a listed undo_change change"
