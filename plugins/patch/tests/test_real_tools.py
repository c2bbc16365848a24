"""patch_apply on what git diff, diff -u and diff -ruN really print: the files come back byte for byte."""

from __future__ import annotations

import shutil
import stat

import pytest

pytestmark = pytest.mark.anyio

ORIGINAL = {
    "main.py": "".join(f"line {i}\n" for i in range(1, 61)).encode(),
    "win.txt": b"alpha\r\nbeta\r\ngamma\r\ndelta\r\n",
    "mixed.txt": b"unix\nwindows\r\nunix again\nend\r\n",
    "no_newline.txt": b"first\nsecond\nlast",
    "add_newline.txt": b"only line",
    "bom.txt": b"\xef\xbb\xbfheading\nbody\n",
    "nested/deep/data.csv": b"a,b\n1,2\n3,4\n",
}

CHANGED = {
    "main.py": ORIGINAL["main.py"]
    .replace(b"line 3\n", b"line three\n")
    .replace(b"line 30\n", b"line 30\ninserted\n")
    .replace(b"line 57\nline 58\n", b""),
    "win.txt": b"alpha\r\nBETA\r\ngamma\r\nnew line\r\ndelta\r\n",
    "mixed.txt": b"unix\nWINDOWS\r\nadded unix\nunix again\nend\r\n",
    "no_newline.txt": b"first\nsecond\nthe new last",
    "add_newline.txt": b"only line\n",
    "bom.txt": b"\xef\xbb\xbfHeading\nbody\n",
    "nested/deep/data.csv": b"a,b\n1,2\n3,4\n5,6\n",
}


def write_tree(directory, files):
    for name, data in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@pytest.fixture
def repo(root, run):
    run(root, "git", "init", "-q")
    run(root, "git", "config", "user.email", "t@example.com")
    run(root, "git", "config", "user.name", "t")
    run(root, "git", "config", "core.autocrlf", "false")
    write_tree(root, ORIGINAL)
    run(root, "git", "add", "-A")
    run(root, "git", "commit", "-qm", "original")
    return root


async def test_git_diff_of_edits_applies_byte_for_byte(repo, run, apply_patch, snapshot):
    write_tree(repo, CHANGED)
    expected = snapshot(repo)
    diff = run(repo, "git", "diff")
    assert "\\ No newline at end of file" in diff and "\r" in diff
    run(repo, "git", "checkout", ".")
    assert snapshot(repo) != expected

    error, text = await apply_patch(diff)

    assert not error, text
    assert snapshot(repo) == expected
    assert f"patched {repo / 'main.py'} (3 hunks)" in text.splitlines()
    assert len(text.splitlines()) == len(CHANGED)


async def test_git_diff_with_created_deleted_and_renamed_files(repo, run, apply_patch, snapshot):
    (repo / "tool.sh").write_bytes(b"#!/bin/sh\necho one\necho two\necho three\necho four\n")
    (repo / "tool.sh").chmod(0o755)
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-qm", "tool")
    write_tree(repo, CHANGED)
    (repo / "created.md").write_bytes(b"# New\n\ntext\n")
    (repo / "empty.txt").write_bytes(b"")
    (repo / "win.txt").unlink()
    (repo / "tool.sh").rename(repo / "bin_tool.sh")
    (repo / "bin_tool.sh").write_bytes(b"#!/bin/sh\necho one\necho two\necho three\necho FOUR\n")
    run(repo, "git", "add", "-A")
    expected = snapshot(repo)
    diff = run(repo, "git", "diff", "--cached", "-M")
    assert "rename from tool.sh" in diff and "new file mode" in diff and "deleted file mode" in diff
    run(repo, "git", "reset", "-q", "--hard")

    error, text = await apply_patch(diff)

    assert not error, text
    assert snapshot(repo) == expected
    assert (repo / "bin_tool.sh").stat().st_mode & stat.S_IXUSR, "a rename keeps the file's mode"
    lines = text.splitlines()
    assert f"created {repo / 'created.md'} (3 lines)" in lines
    assert f"created {repo / 'empty.txt'} (empty)" in lines
    assert f"deleted {repo / 'win.txt'} (1 hunk)" in lines
    assert f"renamed {repo / 'tool.sh'} -> {repo / 'bin_tool.sh'} (1 hunk)" in lines


async def test_diff_u_of_two_files_with_path_and_without(root, run, apply_patch):
    (root / "old.txt").write_bytes(b"keep\nchange me\nkeep too\n")
    (root / "new.txt").write_bytes(b"keep\nchanged\nkeep too\nadded\n")
    (root / "copy.txt").write_bytes((root / "old.txt").read_bytes())
    diff = run(root, "diff", "-u", "old.txt", "new.txt")
    assert diff.startswith("--- old.txt\t")

    error, text = await apply_patch(diff, path="copy.txt")
    assert not error, text
    assert (root / "copy.txt").read_bytes() == (root / "new.txt").read_bytes()

    # Without path, the two names differ and both exist: the old one is the file the diff changes.
    error, text = await apply_patch(diff)
    assert not error, text
    assert text == f"patched {root / 'old.txt'} (1 hunk)"
    assert (root / "old.txt").read_bytes() == (root / "new.txt").read_bytes()


async def test_diff_ruN_of_two_trees_creates_and_deletes(tmp_path, root, run, apply_patch, snapshot):
    before = {"keep.txt": b"same\n", "edit.txt": b"one\ntwo\nthree\n", "gone/old.txt": b"bye\nfor now\n"}
    after = {"keep.txt": b"same\n", "edit.txt": b"one\n2\nthree\n", "fresh/new.txt": b"hello\n"}
    write_tree(tmp_path / "a", before)
    write_tree(tmp_path / "b", after)
    diff = run(tmp_path, "diff", "-ruN", "a", "b")
    assert "1970-01-01" in diff or "1969-12-31" in diff, "diff -N marks absent files with the epoch"
    shutil.rmtree(root)
    shutil.copytree(tmp_path / "a", root)

    error, text = await apply_patch(diff)

    assert not error, text
    assert snapshot(root) == snapshot(tmp_path / "b")
    assert not (root / "gone").exists(), "a directory the deletion empties goes too"
    lines = text.splitlines()
    assert f"created {root / 'fresh/new.txt'} (1 line)" in lines
    assert f"deleted {root / 'gone/old.txt'} (1 hunk)" in lines


async def test_diff_ruN_names_resolve_against_a_directory_path(tmp_path, root, run, apply_patch, snapshot):
    write_tree(tmp_path / "a", {"x.txt": b"1\n2\n"})
    write_tree(tmp_path / "b", {"x.txt": b"1\ntwo\n"})
    diff = run(tmp_path, "diff", "-ruN", "a", "b")
    write_tree(root / "project", {"x.txt": b"1\n2\n"})

    error, text = await apply_patch(diff, path=str(root / "project"))

    assert not error, text
    assert (root / "project" / "x.txt").read_bytes() == b"1\ntwo\n"


async def test_last_file_failing_leaves_every_file_unchanged(repo, run, apply_patch, snapshot):
    write_tree(repo, CHANGED)
    diff = run(repo, "git", "diff")
    run(repo, "git", "checkout", ".")
    before = snapshot(repo)
    sections = diff.split("diff --git ")
    assert sections[-1].startswith("a/win.txt"), "git orders files by name"
    corrupted = "diff --git ".join(sections[:-1] + [sections[-1].replace(" gamma\r\n", " GAMMA\r\n")])

    error, text = await apply_patch(corrupted)

    assert error
    assert snapshot(repo) == before
    first, *_ = text.splitlines()
    assert first == (
        f"PATCH_FAILED: the patch does not apply to {repo / 'win.txt'}: 1 of its 9 hunks does not match. "
        "Nothing was changed: a patch applies whole or not at all."
    )
    assert f"{repo / 'win.txt'}: hunk 1 of 1 (@@ -1,4 +1,5 @@)" in text
    assert "  ! 3 | GAMMA" in text  # expected
    assert "  ! 3 | gamma" in text  # found
