"""patch_apply's rules, one by one, through the real MCP client."""

from __future__ import annotations

import subprocess

import pytest
from fsmcp import ErrorCode, ToolError
from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

NUMBERS = "".join(f"{i}\n" for i in range(1, 21))
NUMBERS_DIFF = """\
--- a/n.txt
+++ b/n.txt
@@ -2,3 +2,3 @@
 2
-3
+three
 4
@@ -15,3 +15,4 @@
 15
 16
+16.5
 17
"""
NUMBERS_AFTER = NUMBERS.replace("3\n", "three\n", 1).replace("16\n", "16\n16.5\n")


async def test_a_markdown_fenced_diff_applies(root, apply_patch):
    (root / "n.txt").write_text(NUMBERS)
    reply = f"Here is the change:\n\n```diff\n{NUMBERS_DIFF}```\n\nIt renames 3 and adds 16.5."

    error, text = await apply_patch(reply)

    assert not error, text
    assert text == f"patched {root / 'n.txt'} (2 hunks)"
    assert (root / "n.txt").read_text() == NUMBERS_AFTER


async def test_hunks_are_found_where_the_file_moved_them(root, apply_patch):
    (root / "n.txt").write_text("new a\nnew b\nnew c\n" + NUMBERS)

    error, text = await apply_patch(NUMBERS_DIFF)

    assert not error, text
    assert text == f"patched {root / 'n.txt'} (2 hunks, offset +3 on hunks 1-2)"
    assert (root / "n.txt").read_text() == "new a\nnew b\nnew c\n" + NUMBERS_AFTER


async def test_the_match_nearest_the_hinted_line_wins(root, apply_patch):
    block = "begin\nbody\nend\n"
    (root / "f.txt").write_text(block + "x\n" * 40 + block)
    diff = "--- a/f.txt\n+++ b/f.txt\n@@ -42,3 +42,3 @@\n begin\n-body\n+BODY\n end\n"

    error, text = await apply_patch(diff)

    assert not error, text
    assert text == f"patched {root / 'f.txt'} (1 hunk, offset +2 on hunk 1)"
    assert (root / "f.txt").read_text() == block + "x\n" * 40 + "begin\nBODY\nend\n"


async def test_a_corrupted_context_fails_with_expected_and_found_lines(root, apply_patch):
    (root / "n.txt").write_text(NUMBERS)
    (root / "other.txt").write_text("a\nb\n")
    other = "--- a/other.txt\n+++ b/other.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
    bad = NUMBERS_DIFF.replace(" 16\n", " sixteen\n")

    error, text = await apply_patch(other + bad)

    assert error
    assert text.startswith(f"PATCH_FAILED: the patch does not apply to {root / 'n.txt'}: 1 of its 3 hunks does not match.")
    assert f"{root / 'n.txt'}: hunk 2 of 2 (@@ -15,3 +15,4 @@)" in text
    assert "closest: line 15, where 2 of 3 agree; the first difference is at line 16." in text
    assert "  ! 16 | sixteen" in text
    assert "  ! 16 | 16" in text
    assert (root / "n.txt").read_text() == NUMBERS
    assert (root / "other.txt").read_text() == "a\nb\n"


async def test_a_whitespace_difference_is_named(root, apply_patch):
    (root / "f.py").write_text("def f():\n    return 1\n")
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n def f():\n-  return 1\n+  return 2\n"

    error, text = await apply_patch(diff)

    assert error and "PATCH_FAILED" in text
    assert "  ! 2 |   return 1   [differs only in whitespace]" in text


async def test_a_patch_already_applied_is_recognised(root, apply_patch):
    (root / "n.txt").write_text(NUMBERS_AFTER)

    error, text = await apply_patch(NUMBERS_DIFF)

    assert error
    assert "is already in the file at line 2; this change may have been applied before." in text


async def test_dev_null_creates_and_refuses_an_existing_file(root, apply_patch):
    diff = "--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"

    error, text = await apply_patch(diff)
    assert not error, text
    assert text == f"created {root / 'sub/new.txt'} (2 lines)"
    assert (root / "sub/new.txt").read_bytes() == b"hello\nworld\n"

    error, text = await apply_patch(diff)
    assert error
    assert text.startswith(f"ALREADY_EXISTS: {root / 'sub/new.txt'} already exists, but the patch creates it")
    assert (root / "sub/new.txt").read_bytes() == b"hello\nworld\n"


async def test_dev_null_deletes_only_when_the_content_matches(root, apply_patch):
    (root / "old.txt").write_text("one\ntwo\n")
    partial = "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n"
    wrong = "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-TWO\n"
    whole = "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n"

    error, text = await apply_patch(partial)
    assert error and text.startswith(f"PATCH_FAILED: the patch does not apply to {root / 'old.txt'}. Nothing was changed")
    assert "but 1 line would remain after its hunks" in text
    error, text = await apply_patch(wrong)
    assert error and text.startswith("PATCH_FAILED") and "  ! 2 | TWO" in text
    assert (root / "old.txt").read_text() == "one\ntwo\n"

    error, text = await apply_patch(whole)
    assert not error, text
    assert text == f"deleted {root / 'old.txt'} (1 hunk)"
    assert not (root / "old.txt").exists()


async def test_a_missing_file_is_not_found_unless_the_diff_creates_it(root, apply_patch):
    error, text = await apply_patch(NUMBERS_DIFF)
    assert error
    assert text.startswith(f"NOT_FOUND: {root / 'n.txt'} does not exist")

    # "-0,0" with no /dev/null: what a model writes for a new file.
    error, text = await apply_patch("--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1 @@\n+1\n")
    assert not error, text
    assert (root / "n.txt").read_text() == "1\n"


async def test_dry_run_reports_and_writes_nothing(root, apply_patch, snapshot):
    (root / "n.txt").write_text(NUMBERS)
    (root / "gone.txt").write_text("x\n")
    diff = NUMBERS_DIFF + "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    before = snapshot(root)

    error, text = await apply_patch(diff, dryRun=True)

    assert not error, text
    assert text.splitlines() == [
        "dry run: every hunk applies; nothing was written.",
        f"would patch {root / 'n.txt'} (2 hunks)",
        f"would create {root / 'new.txt'} (1 line)",
        f"would delete {root / 'gone.txt'} (1 hunk)",
    ]
    assert snapshot(root) == before

    error, text = await apply_patch(diff.replace("-x", "-y"), dryRun=True)
    assert error and text.startswith("PATCH_FAILED")


async def test_paths_outside_the_roots_are_refused_and_nothing_written(tmp_path, root, apply_patch):
    (root / "n.txt").write_text(NUMBERS)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    relative = "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-secret\n+pwned\n"
    absolute = f"--- {outside}\n+++ {outside}\n@@ -1 +1 @@\n-secret\n+pwned\n"

    for evil in (relative, absolute):
        error, text = await apply_patch(NUMBERS_DIFF + evil)
        assert error
        assert text.startswith("ACCESS_DENIED"), text
        assert outside.read_text() == "secret\n"
        assert (root / "n.txt").read_text() == NUMBERS


async def test_read_only_roots_and_servers_refuse(root, make_host, apply_patch):
    (root / "n.txt").write_text(NUMBERS)

    for dry in (False, True):
        error, text = await apply_patch(NUMBERS_DIFF, host=make_host([f"{root}:ro"]), dryRun=dry)
        assert error
        assert text.startswith("READ_ONLY: cannot change"), text
    # Under --read-only the tool, which can only change, is not offered at all.
    error, text = await apply_patch(NUMBERS_DIFF, host=make_host(read_only=True))
    assert error and text.startswith("INVALID_PARAMS: unknown tool 'patch_apply'"), text
    assert (root / "n.txt").read_text() == NUMBERS


async def test_a_write_failing_part_way_puts_every_file_back(root, make_host, apply_patch, monkeypatch):
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    (root / "gone.txt").write_text("g\n")
    diff = (
        "--- /dev/null\n+++ b/new/dir/fresh.txt\n@@ -0,0 +1 @@\n+fresh\n"
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
        "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
    )
    host = make_host()
    real_write = host.fs.write_atomic
    written = []

    def failing_write(path, data, **kw):
        if str(path).endswith("b.txt") and data == b"B\n":
            raise ToolError(ErrorCode.INTERNAL_ERROR, f"{path} could not be written: no space left on the device")
        written.append(str(path))
        return real_write(path, data, **kw)

    monkeypatch.setattr(host.fs, "write_atomic", failing_write)

    error, text = await apply_patch(diff, host=host)

    assert error
    assert text.startswith("INTERNAL_ERROR: ") and "no space left" in text
    assert "the 2 file change(s) already made were undone, so every file is as it was" in text
    assert len(written) >= 3, "fresh.txt and a.txt were written, then a.txt restored"
    assert not (root / "new").exists(), "the directories made for fresh.txt are gone too"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt", "gone.txt"]
    assert [(root / n).read_text() for n in ("a.txt", "b.txt", "gone.txt")] == ["a\n", "b\n", "g\n"]


async def test_a_bare_diff_needs_path_to_the_file(root, apply_patch):
    (root / "n.txt").write_text(NUMBERS)
    bare = NUMBERS_DIFF.split("\n", 2)[2]

    error, text = await apply_patch(bare)
    assert error
    assert text.startswith("INVALID_PARAMS: this patch names no file")

    error, text = await apply_patch(bare, path="n.txt")
    assert not error, text
    assert (root / "n.txt").read_text() == NUMBERS_AFTER


async def test_path_to_a_file_refuses_a_diff_of_several_files(root, apply_patch):
    (root / "n.txt").write_text(NUMBERS)
    two = NUMBERS_DIFF + NUMBERS_DIFF.replace("n.txt", "m.txt")

    error, text = await apply_patch(two, path="n.txt")

    assert error
    assert text.startswith("INVALID_PARAMS: the patch changes 2 files but path names one file")


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("just some text\n", "the patch is in none of the forms patch_apply reads"),
        ("--- a/n.txt\n+++ b/n.txt\n@@ ... @@\n-3\n+three\n", "is not a hunk header"),
        ("--- a/n.txt\n+++ b/n.txt\n@@ -2,4 +2,4 @@\n 2\n-3\n+three\n 4\n", "needs 1 more old and 1 more new line(s)"),
        ("--- a/n.txt\n+++ b/n.txt\n@@ -2,2 +2,2 @@\n 2\n-3\n+three\n 4\n", "has more lines than its header counts"),
        ("diff --git a/p.png b/p.png\nindex 1..2 100644\nBinary files a/p.png and b/p.png differ\n", "binary change"),
        ("diff -ru a/p.png b/p.png\nBinary files a/p.png and b/p.png differ\n", "binary change"),
        ("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+t\n", "a symbolic link"),
    ],
)
async def test_malformed_patches_are_invalid_params(root, apply_patch, patch, message):
    (root / "n.txt").write_text(NUMBERS)

    error, text = await apply_patch(patch)

    assert error
    assert text.startswith("INVALID_PARAMS: ") and message in text, text
    assert (root / "n.txt").read_text() == NUMBERS


async def test_text_around_the_diff_is_ignored(root, apply_patch):
    (root / "n.txt").write_text(NUMBERS)
    mail = (
        "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] rename three\n\n---\n n.txt | 3 ++-\n\n"
        + "diff --git a/n.txt b/n.txt\nindex 111..222 100644\n"
        + NUMBERS_DIFF
        + "-- \n2.39.5\n"
    )

    error, text = await apply_patch(mail)

    assert not error, text
    assert (root / "n.txt").read_text() == NUMBERS_AFTER


async def test_a_mode_change_is_reported_not_applied(root, apply_patch):
    (root / "run.sh").write_text("echo\n")
    diff = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"

    error, text = await apply_patch(diff)

    assert not error, text
    assert text == f"unchanged {root / 'run.sh'} (mode change 100644 → 100755 not applied)"


async def test_a_long_line_is_shown_around_where_it_differs(root, apply_patch):
    line = "var a=1;" * 200
    (root / "min.js").write_text(line + "\n")
    wrong = line[:1000] + "var b=2;" + line[1008:]
    diff = f"--- a/min.js\n+++ b/min.js\n@@ -1 +1 @@\n-{wrong}\n+x\n"

    error, text = await apply_patch(diff)

    assert error
    expected_line, found_line = [t for t in text.splitlines() if t.startswith("  ! 1 | […")]
    assert "var b=2;" in expected_line and "var b=2;" not in found_line
    assert expected_line.endswith(" characters…]") and len(expected_line) < 400


async def test_a_git_copy_with_a_change(root, apply_patch):
    (root / "base.cfg").write_text("a = 1\nb = 2\n")
    diff = (
        "diff --git a/base.cfg b/copy.cfg\nsimilarity index 80%\ncopy from base.cfg\ncopy to copy.cfg\n"
        "--- a/base.cfg\n+++ b/copy.cfg\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
    )

    error, text = await apply_patch(diff)

    assert not error, text
    assert text == f"copied {root / 'base.cfg'} -> {root / 'copy.cfg'} (1 hunk)"
    assert (root / "base.cfg").read_text() == "a = 1\nb = 2\n"
    assert (root / "copy.cfg").read_text() == "a = 1\nb = 3\n"


async def test_a_later_section_sees_an_earlier_one(root, apply_patch):
    (root / "f.txt").write_text("1\n2\n3\n")
    first = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n"
    second = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-1\n+one\n two\n 3\n"

    error, text = await apply_patch(first + second)

    assert not error, text
    assert (root / "f.txt").read_text() == "one\ntwo\n3\n"


async def test_a_result_over_the_size_limit_is_refused_even_in_a_dry_run(root, make_host, apply_patch):
    (root / "f.txt").write_text("x\n" * 600)
    diff = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1,2 @@\n x\n+" + "y" * 100 + "\n"
    host = make_host(max_file_bytes=1200)

    for dry in (True, False):
        error, text = await apply_patch(diff, host=host, dryRun=dry)
        assert error
        assert text.startswith(f"FILE_TOO_LARGE: patched, {root / 'f.txt'} would be 1,301 bytes")
    assert (root / "f.txt").read_text() == "x\n" * 600


async def test_deleting_through_a_symbolic_link_is_refused(root, apply_patch):
    (root / "real.txt").write_text("a\n")
    (root / "link.txt").symlink_to("real.txt")

    error, text = await apply_patch("--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n")

    assert error and text.startswith("NOT_FILE: ") and "is a symbolic link" in text
    assert (root / "real.txt").read_text() == "a\n" and (root / "link.txt").is_symlink()


async def test_the_installed_plugin_serves_patch_apply_over_stdio(root):
    (root / "n.txt").write_text(NUMBERS)
    async with serve_stdio(str(root), "--enable", "patch", cwd=root) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("patch_apply", {"patch": NUMBERS_DIFF})

    hints = tools["patch_apply"].annotations
    assert (hints.read_only_hint, hints.destructive_hint, bool(hints.idempotent_hint), hints.open_world_hint) == (False, True, False, False)  # idempotentHint: false is not sent (the default)
    assert not result.is_error, text_of(result)
    assert (root / "n.txt").read_text() == NUMBERS_AFTER


async def test_a_plain_diff_against_a_scratch_file_outside_patches_the_old_side(root, tmp_path, apply_patch):
    # diff -u notes.txt /tmp/scratch.txt: no a/ b/ prefixes, the +++ side outside the roots.
    (root / "notes.txt").write_text("a\nb\nc\n")
    scratch = tmp_path / "scratch.txt"
    scratch.write_text("a\nB\nc\n")
    diff = subprocess.run(["diff", "-u", "notes.txt", str(scratch)], cwd=root, capture_output=True, text=True, check=False).stdout
    assert diff.startswith("--- notes.txt") and f"+++ {scratch}" in diff
    error, text = await apply_patch(diff)
    assert not error, text
    assert text == f"patched {root / 'notes.txt'} (1 hunk)"
    assert (root / "notes.txt").read_text() == "a\nB\nc\n"
    assert scratch.read_text() == "a\nB\nc\n"


async def test_a_plain_diff_whose_new_side_does_not_exist_patches_the_old_side(root, apply_patch):
    (root / "notes.txt").write_text("a\nb\nc\n")
    error, text = await apply_patch("--- notes.txt\n+++ notes.txt.new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert not error, text
    assert (root / "notes.txt").read_text() == "a\nB\nc\n" and not (root / "notes.txt.new").exists()


async def test_a_plain_diff_whose_only_existing_side_is_outside_is_still_refused(root, tmp_path, apply_patch):
    outside = tmp_path / "outside.txt"
    outside.write_text("a\nb\nc\n")
    error, text = await apply_patch(f"--- {outside}\n+++ gone.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert error and text.startswith("ACCESS_DENIED: "), text
    assert outside.read_text() == "a\nb\nc\n" and not (root / "gone.txt").exists()
