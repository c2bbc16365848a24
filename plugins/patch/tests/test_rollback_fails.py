"""patch_apply whose write fails part-way, and whose putting back of what it had already written
fails too: the error says what state each file is in and what to do next."""

from __future__ import annotations

import os
import shutil

import fsmcp_history.hooks
import fsmcp_patch.hooks
import pytest
from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of

PATCH = """\
--- a/a/x.txt
+++ b/a/x.txt
@@ -1 +1 @@
-one
+ONE
--- a/b/y.txt
+++ b/b/y.txt
@@ -1 +1 @@
-two
+TWO
"""


class Saboteur:
    """Another process, as a hook: when the patch comes to b/y.txt, it puts a directory where
    a/x.txt was (so a/x.txt cannot be put back), and b/y.txt's write is refused."""

    def __init__(self, root):
        self.root = root

    @hookimpl
    def fsmcp_before_change(self, paths):
        if any(p.path.name == "y.txt" for p in paths):
            x = self.root / "a" / "x.txt"
            os.unlink(x)
            os.mkdir(x)
            (x / "inside.txt").write_text("someone else's\n")
            raise ToolError(ErrorCode.PERMISSION_DENIED, "b/y.txt cannot be written (injected)")


@pytest.fixture
def tree(root):
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / "a" / "x.txt").write_text("one\n")
    (root / "b" / "y.txt").write_text("two\n")
    return root


async def _apply(host):
    async with connect(host) as client:
        result = await client.call_tool("patch_apply", {"patch": PATCH})
    return result.is_error, text_of(result)


@pytest.mark.anyio
async def test_the_error_says_which_file_is_left_changed_which_is_untouched_and_what_to_do(tree):
    host = host_for([tree], [("patch", fsmcp_patch.hooks), ("saboteur", Saboteur(tree))], journal="off")
    is_error, text = await _apply(host)
    print(text)
    assert is_error and text.startswith("INTERNAL_ERROR: b/y.txt cannot be written (injected). "), text
    assert (tree / "b" / "y.txt").read_text() == "two\n"
    assert "a/x.txt was patched and could not be put back" in text
    assert "b/y.txt was not written" in text
    assert "The change journal is off: put a/x.txt back by hand" in text


@pytest.mark.anyio
async def test_with_the_journal_it_names_undo_change_which_puts_the_files_back(tree):
    host = host_for([tree], [("patch", fsmcp_patch.hooks), ("history", fsmcp_history.hooks), ("saboteur", Saboteur(tree))])
    async with connect(host) as client:
        result = await client.call_tool("patch_apply", {"patch": PATCH})
        text = text_of(result)
        print(text)
        assert result.is_error and "a/x.txt was patched and could not be put back" in text
        assert "undo_change (with no id: this session's latest change) puts them back" in text and "by hand" not in text
        shutil.rmtree(tree / "a" / "x.txt")  # what the other process put there, looked at and removed
        undone = await client.call_tool("undo_change", {"force": True})
    print(text_of(undone))
    assert not undone.is_error, text_of(undone)
    assert (tree / "a" / "x.txt").read_text() == "one\n" and (tree / "b" / "y.txt").read_text() == "two\n"
