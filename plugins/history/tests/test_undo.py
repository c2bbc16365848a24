"""Every tool that changes files, undone: the tree is byte for byte and mode for mode what it was."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fsmcp.testing import tree_of

PATCH = """--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
 alpha
-beta
+gamma
--- a/sub/b.txt
+++ b/sub/b.txt
@@ -1 +1 @@
-bravo
+charlie
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+fresh
"""

CHANGES = {
    "write_file new, with parents": ("write_file", {"path": "n/e/w.txt", "content": "x"}),
    "write_file over a file": ("write_file", {"path": "run.sh", "content": "changed"}),
    "append_file": ("append_file", {"path": "a.txt", "content": "more"}),
    "create_directory": ("create_directory", {"path": "d1/d2/d3"}),
    "copy_file over a file": ("copy_file", {"source": "a.txt", "destination": "sub/b.txt", "overwrite": True}),
    "copy_file of a tree": ("copy_file", {"source": "sub", "destination": "sub2"}),
    "move_file over a file": ("move_file", {"source": "run.sh", "destination": "sub/b.txt", "overwrite": True}),
    "move_file of a tree": ("move_file", {"source": "sub", "destination": "elsewhere/sub"}),
    "move_file of a link": ("move_file", {"source": "link", "destination": "link2"}),
    "delete_file of a tree": ("delete_file", {"path": "sub", "recursive": True}),
    "delete_file of a link": ("delete_file", {"path": "link"}),
    "edit_file": ("edit_file", {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}),
    "edit_files": ("edit_files", {"paths": ["a.txt", "sub/b.txt"], "edits": [{"oldText": "a", "newText": "A"}]}),
    "patch_apply over several files": ("patch_apply", {"patch": PATCH}),
    "extract_archive over existing files": ("extract_archive", {"archive": "bundle.tar", "destination": "out", "overwrite": True}),
    "compress_files": ("compress_files", {"files": ["sub"], "output": "sub.tar"}),
    "batch_operations": (
        "batch_operations",
        {
            "operations": [
                {"tool": "write_file", "arguments": {"path": "a.txt", "content": "one"}},
                {"tool": "move_file", "arguments": {"source": "sub/b.txt", "destination": "b-moved.txt"}},
                {"tool": "delete_file", "arguments": {"path": "sub/deep", "recursive": True}},
                {"tool": "create_directory", "arguments": {"path": "made"}},
            ]
        },
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(CHANGES))
async def test_a_change_undone_leaves_the_tree_as_it_was(server, root: Path, case: str):
    tool, args = CHANGES[case]
    before = tree_of(root)
    async with server() as s:
        await s.ok(tool, **args)
        assert tree_of(root) != before
        listed = await s.client.call_tool("list_changes", {})
        [latest, *_] = listed.structured_content["changes"]
        assert latest["tool"] == tool and not latest["undone"]
        text = await s.ok("undo_change")
        assert f"Change {latest['id']} ({tool}" in text
    assert tree_of(root) == before


@pytest.mark.anyio
async def test_an_undo_is_a_change_that_undoing_redoes(server, root: Path):
    async with server() as s:
        await s.ok("write_file", path="a.txt", content="v2")
        after = tree_of(root)
        await s.ok("undo_change")
        assert (root / "a.txt").read_text() == "alpha\nbeta\n"
        changes = (await s.client.call_tool("list_changes", {})).structured_content["changes"]
        undo, original = changes[0], changes[1]
        assert undo["tool"] == "undo_change" and undo["undoes"] == original["id"] and original["undone"]
        await s.fail("undo_change", "NOT_FOUND")  # no id: undos are skipped, nothing else is left
        await s.ok("undo_change", id=undo["id"])
        assert tree_of(root) == after
        changes = (await s.client.call_tool("list_changes", {})).structured_content["changes"]
        assert not [c for c in changes if c["id"] == original["id"]][0]["undone"]
        await s.ok("undo_change")
        assert (root / "a.txt").read_text() == "alpha\nbeta\n"


@pytest.mark.anyio
async def test_undoing_in_turn_walks_back_through_several_changes(server, root: Path):
    before = tree_of(root)
    async with server() as s:
        await s.ok("write_file", path="a.txt", content="1")
        await s.ok("write_file", path="a.txt", content="2")
        await s.ok("delete_file", path="sub", recursive=True)
        for _ in range(3):
            await s.ok("undo_change")
    assert tree_of(root) == before


@pytest.mark.anyio
async def test_an_undo_over_a_file_changed_since_is_refused_and_force_restores(server, root: Path):
    async with server() as s:
        await s.ok("patch_apply", patch=PATCH)
        (root / "sub" / "b.txt").write_text("someone else\n")
        changed = tree_of(root)
        text = await s.fail("undo_change", "EDIT_CONFLICT")
        assert str(root / "sub" / "b.txt") in text and str(root / "a.txt") not in text
        assert tree_of(root) == changed
        await s.ok("undo_change", force=True)
    assert (root / "sub" / "b.txt").read_text() == "bravo\n"
    assert (root / "a.txt").read_text() == "alpha\nbeta\n" and not (root / "new.txt").exists()


@pytest.mark.anyio
async def test_a_directory_swapped_for_a_link_outside_gets_nothing_written_outside(server, root: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.txt").write_text("outside\n")
    async with server() as s:
        await s.ok("write_file", path="sub/b.txt", content="changed")
        os.rename(root / "sub", tmp_path / "sub-aside")
        os.symlink(outside, root / "sub")
        before_outside = tree_of(outside)
        await s.fail("undo_change", "ACCESS_DENIED")
        await s.fail("undo_change", "ACCESS_DENIED", force=True)
        assert tree_of(outside) == before_outside


@pytest.mark.anyio
async def test_a_failed_call_leaves_no_change_behind(server, root: Path):
    async with server() as s:
        await s.fail("edit_file", "PATTERN_NOT_FOUND", path="a.txt", edits=[{"oldText": "absent", "newText": "x"}])
        await s.fail("move_file", "ALREADY_EXISTS", source="a.txt", destination="sub/b.txt")
        text = await s.ok("list_changes")
        assert text == "No changes in the journal."


@pytest.mark.anyio
async def test_a_change_too_large_to_keep_is_done_and_says_it_cannot_be_undone(server, root: Path):
    async with server(journal_max_bytes=100) as s:
        text = await s.ok("delete_file", path="sub", recursive=True)
        assert "This change cannot be undone" in text and "journal_max_bytes" in text
        assert not (root / "sub").exists()
        text = await s.fail("undo_change", "INVALID_PARAMS")
        assert "cannot be undone" in text


@pytest.mark.anyio
async def test_the_note_that_a_change_cannot_be_undone_is_a_sentence_of_the_result(server, root: Path):
    # A client that joins the result's text blocks without a separator read "...done.This change".
    async with server(journal_max_bytes=100) as s:
        result = await s.client.call_tool("delete_file", {"path": "sub", "recursive": True})
        texts = [block.text for block in result.content]
        assert len(texts) == 1, texts
        assert re.search(r"\w\. This change cannot be undone: ", texts[0]), texts


@pytest.mark.anyio
async def test_the_journal_is_out_of_reach_of_the_tools(server, root: Path, state: Path):
    # No root holds it (the start refuses that); a link to it leads outside the roots.
    async with server() as s:
        await s.ok("write_file", path="a.txt", content="v2")
        os.symlink(state, root / "j")
        await s.fail("list_directory", "ACCESS_DENIED", path="j")
        await s.fail("read_file", "ACCESS_DENIED", path="j/lock")
        await s.fail("write_file", "ACCESS_DENIED", path="j/planted", content="x")
        found = await s.ok("grep_files", regex="alpha", directory=".")
        assert str(state) not in found and "changes" not in found, found
    assert not (state / "planted").exists()


@pytest.mark.anyio
async def test_with_the_journal_off_nothing_is_kept_and_the_tools_say_so(server, root: Path, state: Path):
    async with server(journal="off") as s:
        await s.ok("write_file", path="a.txt", content="v2")
        text = await s.fail("undo_change", "INTERNAL_ERROR")
        assert 'journal = "off"' in text
    assert not state.exists()


@pytest.mark.anyio
async def test_list_changes_narrows_to_a_path_and_a_limit(server, root: Path):
    async with server() as s:
        await s.ok("write_file", path="a.txt", content="1")
        await s.ok("write_file", path="sub/b.txt", content="2")
        await s.ok("delete_file", path="sub", recursive=True)
        result = await s.client.call_tool("list_changes", {"path": "sub/b.txt"})
        assert [c["tool"] for c in result.structured_content["changes"]] == ["delete_file", "write_file"]
        result = await s.client.call_tool("list_changes", {"path": "a.txt"})
        assert [c["paths"] for c in result.structured_content["changes"]] == [[str(root / "a.txt")]]
        text = await s.ok("list_changes", limit=1)
        assert len(text.splitlines()) == 1 and "delete_file" in text


@pytest.mark.anyio
async def test_after_an_undo_the_session_edits_the_restored_file_without_a_stale_conflict(server, root: Path):
    async with server() as s:
        await s.ok("read_file", path="a.txt")
        await s.ok("write_file", path="a.txt", content="alpha\ngamma\n")
        await s.ok("undo_change")
        await s.ok("edit_file", path="a.txt", edits=[{"oldText": "beta", "newText": "delta"}])
    assert (root / "a.txt").read_text() == "alpha\ndelta\n"
