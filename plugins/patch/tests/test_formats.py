"""patch_apply on the edit formats models write: OpenAI's apply_patch envelope and Aider's
SEARCH/REPLACE blocks, through the real server over stdio, undone through undo_change."""

from __future__ import annotations

from pathlib import Path

import pytest
from fsmcp.testing import ToolCalls, serve_stdio, tree_of

pytestmark = pytest.mark.anyio

APP = """\
import os


class Greeter:
    def greet(self, name):
        print("hello", name)
        return 0

    def leave(self, name):
        print("bye", name)
        return 0


class Other:
    def greet(self, name):
        print("other hello", name)
        return 0


def main():
    Greeter().greet(os.environ.get("USER", "world"))
"""

# As a model writes it: nested @@ anchors to pick the second greet, a hunk anchored at the end,
# a hunk without an anchor line, a file moved with a change, one added and one deleted, a CRLF file.
APPLY_PATCH = """\
Here is the patch:

*** Begin Patch
*** Update File: src/app.py
@@ class Other:
@@     def greet(self, name):
-        print("other hello", name)
+        print("other hi", name)
         return 0
@@
 def main():
-    Greeter().greet(os.environ.get("USER", "world"))
+    Greeter().leave(os.environ.get("USER", "world"))
*** End of File
*** Update File: notes/todo.txt
*** Move to: notes/done.txt
@@
 first
-second
+second, done
*** Add File: docs/usage.md
+# Usage
+
+python -m app
*** Delete File: old.txt
*** Update File: win.txt
@@ beta
-gamma
+GAMMA
*** End Patch
"""

SEARCH_REPLACE = """\
I'll make three changes.

src/app.py
```python
<<<<<<< SEARCH
    def leave(self, name):
        print("bye", name)
=======
    def leave(self, name):
        print("goodbye", name)
>>>>>>> REPLACE
```

src/app.py
```python
<<<<<<< SEARCH
import os
=======
import os
import sys
>>>>>>> REPLACE
```

win.txt
```
<<<<<<< SEARCH
gamma
=======
gamma
gamma 2
>>>>>>> REPLACE
```

docs/new.md
```markdown
<<<<<<< SEARCH
=======
# New

made by an empty SEARCH
>>>>>>> REPLACE
```
"""


def seed(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("first\nsecond\nthird\n")
    (root / "old.txt").write_text("to be deleted\n")
    (root / "win.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\ndelta\r\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    seed(r)
    return r


@pytest.fixture
def server(root: Path, tmp_path: Path):
    """The real ``fsmcp serve`` over stdio, every installed plugin, the journal under tmp_path."""

    def start(*extra: str):
        return serve_stdio(str(root), "--journal", str(tmp_path / "journal"), *extra, cwd=root)

    return start


async def test_an_apply_patch_text_adds_deletes_updates_and_moves_and_undo_puts_it_back(root, server):
    before = tree_of(root)
    async with server() as client:
        s = ToolCalls(client)
        text = await s.ok("patch_apply", patch=APPLY_PATCH)
        assert text.splitlines() == [
            f"patched {root / 'src/app.py'} (2 hunks)",
            f"renamed {root / 'notes/todo.txt'} -> {root / 'notes/done.txt'} (1 hunk)",
            f"created {root / 'docs/usage.md'} (3 lines)",
            f"deleted {root / 'old.txt'}",
            f"patched {root / 'win.txt'} (1 hunk)",
        ]
        app = (root / "src" / "app.py").read_text()
        assert 'print("other hi", name)' in app and 'print("hello", name)' in app, "the second greet, found by its anchors"
        assert app.endswith('    Greeter().leave(os.environ.get("USER", "world"))\n')
        assert (root / "notes" / "done.txt").read_text() == "first\nsecond, done\nthird\n"
        assert not (root / "notes" / "todo.txt").exists() and not (root / "old.txt").exists()
        assert (root / "docs" / "usage.md").read_bytes() == b"# Usage\n\npython -m app\n"
        assert (root / "win.txt").read_bytes() == b"alpha\r\nbeta\r\nGAMMA\r\ndelta\r\n", "a CRLF file stays CRLF"

        changes = (await client.call_tool("list_changes", {})).structured_content["changes"]
        assert changes[0]["tool"] == "patch_apply", "one journaled change"
        await s.ok("undo_change")
    assert tree_of(root) == before


async def test_search_replace_blocks_in_several_files_and_an_empty_search_creating_one(root, server):
    before = tree_of(root)
    async with server() as client:
        s = ToolCalls(client)
        text = await s.ok("patch_apply", patch=SEARCH_REPLACE)
        assert text.splitlines() == [
            f"patched {root / 'src/app.py'} (2 blocks)",
            f"patched {root / 'win.txt'} (1 block)",
            f"created {root / 'docs/new.md'} (3 lines)",
        ]
        app = (root / "src" / "app.py").read_text()
        assert app.startswith("import os\nimport sys\n") and 'print("goodbye", name)' in app
        assert (root / "win.txt").read_bytes() == b"alpha\r\nbeta\r\ngamma\r\ngamma 2\r\ndelta\r\n", "a CRLF file stays CRLF"
        assert (root / "docs" / "new.md").read_text() == "# New\n\nmade by an empty SEARCH\n"
        changes = (await client.call_tool("list_changes", {})).structured_content["changes"]
        assert changes[0]["tool"] == "patch_apply"
        await s.ok("undo_change")
    assert tree_of(root) == before


async def test_a_failing_hunk_writes_nothing_and_shows_the_nearest_lines(root, server):
    broken = APPLY_PATCH.replace('-        print("other hello", name)', '-        print("other hallo", name)')
    before = tree_of(root)
    async with server() as client:
        text = await ToolCalls(client).fail("patch_apply", "PATCH_FAILED", patch=broken)
    assert tree_of(root) == before
    assert f"the patch does not apply to {root / 'src/app.py'}: 1 of its 4 hunks does not match" in text, "an added file's lines are no hunk"
    assert "hunk 1 of 2 (@@ class Other: @@     def greet(self, name):)" in text
    assert '  ! 16 |         print("other hello", name)' in text, "the file's nearest lines, numbered"
    assert '  ! 16 |         print("other hallo", name)' in text


async def test_a_missing_anchor_names_it_and_shows_the_nearest_line(root, server):
    broken = APPLY_PATCH.replace("@@ class Other:", "@@ class Another:")
    before = tree_of(root)
    async with server() as client:
        text = await ToolCalls(client).fail("patch_apply", "PATCH_FAILED", patch=broken)
    assert tree_of(root) == before
    assert "its @@ line 'class Another:' is not in the file" in text
    assert "  ! 14 | class Other:" in text


async def test_a_failing_block_writes_nothing_and_shows_the_nearest_lines(root, server):
    broken = SEARCH_REPLACE.replace('        print("bye", name)\n=', '        print("ciao", name)\n=')
    before = tree_of(root)
    async with server() as client:
        text = await ToolCalls(client).fail("patch_apply", "PATCH_FAILED", patch=broken)
    assert tree_of(root) == before
    assert f"the patch does not apply to {root / 'src/app.py'}: 1 of its 4 blocks does not match" in text
    assert "block 1 of 4" in text
    assert '  ! 10 |         print("bye", name)' in text
    assert '  ! 10 |         print("ciao", name)' in text


async def test_dry_run_of_each_format_writes_nothing(root, server):
    before = tree_of(root)
    async with server() as client:
        s = ToolCalls(client)
        text = await s.ok("patch_apply", patch=APPLY_PATCH, dryRun=True)
        assert text.splitlines()[:2] == ["dry run: every hunk applies; nothing was written.", f"would patch {root / 'src/app.py'} (2 hunks)"]
        text = await s.ok("patch_apply", patch=SEARCH_REPLACE, dryRun=True)
        assert text.splitlines()[:2] == ["dry run: every block applies; nothing was written.", f"would patch {root / 'src/app.py'} (2 blocks)"]
        changes = (await client.call_tool("list_changes", {})).structured_content["changes"]
        assert changes == [], "a dry run is no change"
    assert tree_of(root) == before


async def test_paths_outside_the_roots_are_refused_in_each_format(root, tmp_path, server):
    outside = tmp_path / "outside.txt"
    outside.write_text("a\nb\n")
    before = tree_of(root)
    texts = [
        f"*** Begin Patch\n*** Update File: ../outside.txt\n@@\n a\n-b\n+B\n*** Add File: fresh.txt\n+x\n*** End Patch\n",
        f"*** Begin Patch\n*** Update File: src/app.py\n*** Move to: {outside}.moved\n@@\n-import os\n+import sys\n*** End Patch\n",
        f"fresh.txt\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n\n{outside}\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n",
    ]
    async with server() as client:
        s = ToolCalls(client)
        for text in texts:
            await s.fail("patch_apply", "ACCESS_DENIED", patch=text)
    assert tree_of(root) == before
    assert outside.read_text() == "a\nb\n" and not Path(f"{outside}.moved").exists()


async def test_whitespace_the_model_got_wrong_is_tolerated_and_the_file_keeps_its_own(root, server):
    # Context quoted without its trailing spaces and with four spaces too few (as codex's
    # apply_patch and Aider tolerate), the added line written at the quoted depth.
    (root / "w.py").write_text("def f():\n    if x:   \n        a = 1\n        b = 2\n")
    sr = "w.py\n<<<<<<< SEARCH\n    if x:\n        a = 1\n=======\n    if x:\n        a = 10\n>>>>>>> REPLACE\n"
    shallow = "*** Begin Patch\n*** Update File: w.py\n@@\n if x:\n     a = 10\n-    b = 2\n+    b = 20\n*** End Patch\n"
    async with server() as client:
        s = ToolCalls(client)
        await s.ok("patch_apply", patch=sr)
        assert (root / "w.py").read_text() == "def f():\n    if x:   \n        a = 10\n        b = 2\n", "an unchanged line keeps its bytes"
        text = await s.ok("patch_apply", patch=shallow)
    assert "matched ignoring indentation" in text
    assert (root / "w.py").read_text() == "def f():\n    if x:   \n        a = 10\n        b = 20\n"


# -- the rules one by one, through the client in process (as test_patch_apply.py) -------------


async def test_an_apply_patch_text_cut_short_is_refused(root, apply_patch):
    error, text = await apply_patch("*** Begin Patch\n*** Update File: old.txt\n@@\n-to be deleted\n+kept\n")
    assert error and text.startswith("INVALID_PARAMS: the apply_patch text is malformed at line 5: there is no '*** End Patch' line")
    assert (root / "old.txt").read_text() == "to be deleted\n"


async def test_an_apply_patch_inside_a_fence_or_a_heredoc_applies(root, apply_patch):
    body = "*** Begin Patch\n*** Update File: old.txt\n@@\n-to be deleted\n+kept\n*** End Patch\n"
    error, text = await apply_patch(f"```\n{body}```\n")
    assert not error, text
    error, text = await apply_patch(f"apply_patch <<'EOF'\n{body.replace('-to be deleted', '-kept').replace('+kept', '+kept twice')}EOF\n")
    assert not error, text
    assert (root / "old.txt").read_text() == "kept twice\n"


async def test_adding_a_file_that_exists_or_moving_over_one_is_refused(root, apply_patch):
    error, text = await apply_patch("*** Begin Patch\n*** Add File: old.txt\n+x\n*** End Patch\n")
    assert error and text.startswith(f"ALREADY_EXISTS: {root / 'old.txt'} already exists, but the patch creates it (*** Add File)")
    error, text = await apply_patch("*** Begin Patch\n*** Update File: notes/todo.txt\n*** Move to: old.txt\n*** End Patch\n")
    assert error and text.startswith("ALREADY_EXISTS: ")
    assert (root / "old.txt").read_text() == "to be deleted\n" and (root / "notes/todo.txt").exists()


async def test_an_update_of_a_missing_file_is_not_found(root, apply_patch):
    error, text = await apply_patch("*** Begin Patch\n*** Update File: nope.txt\n@@\n+x\n*** End Patch\n")
    assert error and text.startswith(f"NOT_FOUND: {root / 'nope.txt'} does not exist")
    assert "create the file (*** Add File)" in text and not (root / "nope.txt").exists()


async def test_end_of_file_anchors_a_hunk_at_the_end(root, apply_patch):
    (root / "r.txt").write_text("x\nend\nmiddle\nx\nend\n")
    error, text = await apply_patch("*** Begin Patch\n*** Update File: r.txt\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch\n")
    assert not error, text
    assert (root / "r.txt").read_text() == "x\nend\nmiddle\nx\nEND\n"


async def test_a_pure_addition_goes_after_its_anchor_or_else_at_the_end(root, apply_patch):
    (root / "r.py").write_text("def a():\n    pass\n\n\ndef b():\n    pass\n")
    patch = "*** Begin Patch\n*** Update File: r.py\n@@ def a():\n+    '''A.'''\n@@ def b():\n-    pass\n+    return 2\n*** End Patch\n"
    error, text = await apply_patch(patch)
    assert not error, text
    assert (root / "r.py").read_text() == "def a():\n    '''A.'''\n    pass\n\n\ndef b():\n    return 2\n"
    error, text = await apply_patch("*** Begin Patch\n*** Update File: r.py\n@@\n+# end\n*** End Patch\n")
    assert not error, text
    assert (root / "r.py").read_text().endswith("    return 2\n# end\n")


async def test_markers_padded_with_whitespace_are_read_as_codex_reads_them(root, apply_patch):
    patch = " *** Begin Patch\n  *** Update File: old.txt\n@@\n-to be deleted\n+kept\n *** End Patch \n"
    error, text = await apply_patch(patch)
    assert not error, text
    assert (root / "old.txt").read_text() == "kept\n"


async def test_typographic_quotes_and_a_blank_line_left_between_hunks_are_tolerated(root, apply_patch):
    (root / "q.md").write_text("He said \u201chello\u201d \u2014 twice.\nnext\n")
    patch = '*** Begin Patch\n*** Update File: q.md\n@@\n-He said "hello" - twice.\n+He said "bye".\n \n*** End Patch\n'
    error, text = await apply_patch(patch)
    assert not error, text
    assert "matched ignoring typographic quotes and dashes" in text
    assert (root / "q.md").read_text() == 'He said "bye".\nnext\n'


async def test_a_block_replaces_the_first_match_and_applies_to_what_earlier_blocks_left(root, apply_patch):
    (root / "t.txt").write_text("x = 1\ny = 2\nx = 1\n")
    blocks = "t.txt\n<<<<<<< SEARCH\nx = 1\n=======\nx = 10\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nx = 1\n=======\nx = 100\n>>>>>>> REPLACE\n"
    error, text = await apply_patch(blocks)
    assert not error, text
    assert text == f"patched {root / 't.txt'} (2 blocks)"
    assert (root / "t.txt").read_text() == "x = 10\ny = 2\nx = 100\n"


async def test_an_empty_search_appends_to_a_file_that_exists(root, apply_patch):
    (root / "t.txt").write_text("one")
    error, text = await apply_patch("t.txt\n<<<<<<< SEARCH\n=======\ntwo\n>>>>>>> REPLACE\n")
    assert not error, text
    assert (root / "t.txt").read_text() == "one\ntwo"  # the file keeps its missing final newline


async def test_blocks_without_a_file_name_need_path(root, apply_patch):
    block = "Change it like this:\n<<<<<<< SEARCH\nto be deleted\n=======\nkept\n>>>>>>> REPLACE\n"
    error, text = await apply_patch(block)
    assert error and text.startswith("INVALID_PARAMS: this patch names no file (it has no a line with the file's path")
    error, text = await apply_patch(block, path="old.txt")
    assert not error, text
    assert (root / "old.txt").read_text() == "kept\n"


async def test_a_block_left_open_is_refused(root, apply_patch):
    error, text = await apply_patch("old.txt\n<<<<<<< SEARCH\nto be deleted\n=======\nkept\n")
    assert error and text.startswith("INVALID_PARAMS: the SEARCH/REPLACE block opened at line 2 has no '>>>>>>> REPLACE' at its end")
    assert (root / "old.txt").read_text() == "to be deleted\n"


async def test_a_block_file_name_in_bold_or_backticks_and_a_fence_naming_the_file(root, apply_patch):
    text_in = (
        "**old.txt**\n```\n<<<<<<< SEARCH\nto be deleted\n=======\nkept\n>>>>>>> REPLACE\n```\n"
        "```notes/todo.txt\n<<<<<<< SEARCH\nsecond\n=======\n2nd\n>>>>>>> REPLACE\n```\n"
    )
    error, text = await apply_patch(text_in)
    assert not error, text
    assert (root / "old.txt").read_text() == "kept\n" and (root / "notes/todo.txt").read_text() == "first\n2nd\nthird\n"


async def test_a_unified_diff_quoting_the_markers_is_still_a_unified_diff(root, apply_patch):
    (root / "m.md").write_text("*** Begin Patch\n<<<<<<< SEARCH\nend\n")
    diff = "--- a/m.md\n+++ b/m.md\n@@ -1,3 +1,3 @@\n *** Begin Patch\n <<<<<<< SEARCH\n-end\n+END\n"
    error, text = await apply_patch(diff)
    assert not error, text
    assert (root / "m.md").read_text() == "*** Begin Patch\n<<<<<<< SEARCH\nEND\n"


MARK = "s3cr3t-MARK-5c1e"
ENV = f"DB_HOST=db.internal\nDB_PASSWORD={MARK}\nDB_USER=app\n"


@pytest.mark.parametrize("policy", ["protected", "plain"])
async def test_a_protected_file_failing_in_each_format_shows_none_of_its_lines(tmp_path, root, policy):
    # allow_write lets the tools change .env but never show it: a hunk, an @@ line or a block
    # that does not match says so without the file's nearest lines. Plain (the policy off) is
    # the control: the same calls show the marker, so the test can see a leak.
    (root / ".env").write_text(ENV)
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.secrets]\nallow_write = true\n")
    extra = ["--disable", "secrets"] if policy == "plain" else []
    texts = [
        "*** Begin Patch\n*** Update File: .env\n@@\n DB_PASSWORD=guess\n-DB_USER=app\n+DB_USER=web\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: .env\n@@ DB_PASSWORD=guess\n-DB_USER=app\n+DB_USER=web\n*** End Patch\n",
        ".env\n<<<<<<< SEARCH\nDB_PASSWORD=guess\nDB_USER=app\n=======\nDB_USER=web\n>>>>>>> REPLACE\n",
    ]
    seen = []
    async with serve_stdio(str(root), "--config", str(config), "--journal", str(tmp_path / "journal"), *extra, cwd=root) as client:
        for text in texts:
            result = await client.call_tool("patch_apply", {"patch": text})
            assert result.is_error
            seen.append(result.model_dump_json())
    assert (root / ".env").read_text() == ENV
    if policy == "protected":
        assert not any(MARK in s for s in seen), seen
        assert all("protected by the secrets policy" in s for s in seen), seen
    else:
        assert all(MARK in s for s in seen), seen


async def test_a_protected_file_is_neither_deleted_nor_moved_away_even_under_allow_write(tmp_path, root):
    # A delete quotes no line and a move would carry the secret to a name the tools read: both
    # are refused as delete_file and move_file refuse them.
    (root / ".env").write_text(ENV)
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.secrets]\nallow_write = true\n")
    async with serve_stdio(str(root), "--config", str(config), "--journal", str(tmp_path / "journal"), cwd=root) as client:
        s = ToolCalls(client)
        await s.fail("patch_apply", "ACCESS_DENIED", patch="*** Begin Patch\n*** Delete File: .env\n*** End Patch\n")
        await s.fail("patch_apply", "ACCESS_DENIED", patch="*** Begin Patch\n*** Update File: .env\n*** Move to: env.txt\n*** End Patch\n")
    assert (root / ".env").read_text() == ENV and not (root / "env.txt").exists()


async def test_a_bom_and_a_missing_final_newline_are_kept(root, apply_patch):
    (root / "b.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree")
    error, text = await apply_patch("b.txt\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n")
    assert not error, text
    error, text = await apply_patch("*** Begin Patch\n*** Update File: b.txt\n@@\n two\n-three\n+THREE\n*** End of File\n*** End Patch\n")
    assert not error, text
    assert (root / "b.txt").read_bytes() == b"\xef\xbb\xbfONE\r\ntwo\r\nTHREE"


async def test_a_block_quoting_an_apply_patch_text_is_a_block(root, apply_patch):
    (root / "doc.md").write_text("Example:\nold example\n")
    blocks = "doc.md\n<<<<<<< SEARCH\nold example\n=======\n*** Begin Patch\n*** Delete File: x\n*** End Patch\n>>>>>>> REPLACE\n"
    error, text = await apply_patch(blocks)
    assert not error, text
    assert (root / "doc.md").read_text() == "Example:\n*** Begin Patch\n*** Delete File: x\n*** End Patch\n"


async def test_a_block_no_line_of_which_is_in_the_file_is_shown_beside_the_line_most_like_it(root, apply_patch):
    (root / "v.py").write_text("".join(f"value_{i} = compute({i}, 'a')\n" for i in range(1, 41)))
    error, text = await apply_patch("v.py\n<<<<<<< SEARCH\nvalue_30 = compute(30, 'b')\n=======\nvalue_30 = 0\n>>>>>>> REPLACE\n")
    assert error
    assert "closest: line 30, where the lines are most like the hunk's; none agrees whole." in text
    assert "  ! 30 | value_30 = compute(30, 'a')" in text and "    29 | value_29 = compute(29, 'a')" in text
