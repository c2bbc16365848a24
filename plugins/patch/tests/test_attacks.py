"""patch_apply against what an attack pass found: rules a patch must keep as the single-file
tools keep them, texts it must not half-read, and dry runs that answer as the real call does."""

from __future__ import annotations

import os

import pytest
from fsmcp.testing import ToolCalls, serve_stdio, tree_of

pytestmark = pytest.mark.anyio


def _allow_write(tmp_path):
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.secrets]\nallow_write = true\n")
    return ["--config", str(config), "--journal", str(tmp_path / "journal")]


async def test_a_patch_copies_moves_or_renames_nothing_into_a_protected_name_even_under_allow_write(tmp_path, root):
    # copy_file and move_file refuse a protected destination, allow_write or not: a patch is
    # no way around that, in a dry run or a real one, in either format.
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    texts = [
        "diff --git a/a.txt b/id_dsa\nsimilarity index 100%\ncopy from a.txt\ncopy to id_dsa\n",
        "diff --git a/a.txt b/id_dsa\nsimilarity index 100%\nrename from a.txt\nrename to id_dsa\n",
        "*** Begin Patch\n*** Update File: b.txt\n*** Move to: id_rsa\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: b.txt\n*** Move to: id_ed25519\n@@\n-b\n+c\n*** End Patch\n",
    ]
    before = tree_of(root)
    async with serve_stdio(str(root), *_allow_write(tmp_path), cwd=root) as client:
        s = ToolCalls(client)
        await s.fail("copy_file", "ACCESS_DENIED", source="a.txt", destination="id_dsa")  # the rule kept
        for text in texts:
            for dry in (True, False):
                await s.fail("patch_apply", "ACCESS_DENIED", patch=text, dryRun=dry)
    assert tree_of(root) == before


DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"
BLOCK = "b.txt\n<<<<<<< SEARCH\nbee\n=======\nBEE\n>>>>>>> REPLACE\n"
ENVELOPE = "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n"


@pytest.mark.parametrize(
    ("text", "forms"),
    [
        (DIFF + "\n" + BLOCK, ("SEARCH/REPLACE", "unified diff")),
        (BLOCK + "\n" + DIFF, ("SEARCH/REPLACE", "unified diff")),
        (DIFF + "\n" + ENVELOPE, ("apply_patch", "unified diff")),
        (ENVELOPE + "\n" + DIFF, ("apply_patch", "unified diff")),
        (ENVELOPE + "\n" + BLOCK, ("apply_patch", "SEARCH/REPLACE")),
        (BLOCK + "\n" + ENVELOPE, ("apply_patch", "SEARCH/REPLACE")),
    ],
    ids=["diff-block", "block-diff", "diff-envelope", "envelope-diff", "envelope-block", "block-envelope"],
)
async def test_a_text_mixing_two_forms_is_refused_naming_both(root, apply_patch, text, forms):
    # Only one form is read per text: applying it and dropping the other said OK for half a patch.
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("bee\n")
    before = tree_of(root)
    error, said = await apply_patch(text)
    assert error and said.startswith("INVALID_PARAMS: "), said
    assert all(form in said for form in forms), said
    assert tree_of(root) == before


async def test_a_block_may_quote_a_diff_and_an_apply_patch_text_in_its_own_lines(root, apply_patch):
    (root / "doc.md").write_text("Example:\nold\n")
    block = "doc.md\n<<<<<<< SEARCH\nold\n=======\n" + DIFF + ENVELOPE + ">>>>>>> REPLACE\n"
    error, said = await apply_patch(block)
    assert not error, said
    assert (root / "doc.md").read_text() == "Example:\n" + DIFF + ENVELOPE


async def test_a_search_holding_an_underline_is_searched_whole(root, apply_patch):
    # Aider's divider is exactly seven '=': an RST underline of five or nine is a line of the file.
    (root / "doc.rst").write_text("Title\n=====\nold\n\nPart\n=========\nold\n")
    error, said = await apply_patch("doc.rst\n<<<<<<< SEARCH\nPart\n=========\nold\n=======\nPart\n=========\nnew\n>>>>>>> REPLACE\n")
    assert not error, said
    error, said = await apply_patch("doc.rst\n<<<<<<< SEARCH\nTitle\n=====\nold\n=======\nTitle\n=====\nnew\n>>>>>>> REPLACE\n")
    assert not error, said
    assert (root / "doc.rst").read_text() == "Title\n=====\nnew\n\nPart\n=========\nnew\n"


async def test_a_block_with_two_dividers_is_refused_as_ambiguous(root, apply_patch):
    # A conflict's own '=======' in SEARCH: which line divides is a guess, and a guess edits wrongly.
    conflict = "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> branch\n"
    (root / "c.txt").write_text("a\n" + conflict + "z\n")
    before = tree_of(root)
    error, said = await apply_patch("c.txt\n<<<<<<< SEARCH\n" + conflict + "=======\nmine\n>>>>>>> REPLACE\n")
    assert error and said.startswith("INVALID_PARAMS: ") and "2 '=======' lines" in said, said
    assert tree_of(root) == before


@pytest.mark.parametrize(
    "text",
    [
        "f.txt\n<<<<<<< SEARCH\n=======\nc\n>>>>>>> REPLACE\n",
        "*** Begin Patch\n*** Update File: f.txt\n@@\n+c\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: f.txt\n@@\n b\n+c\n*** End Patch\n",
    ],
    ids=["empty-search", "pure-addition", "after-context"],
)
async def test_appending_to_a_file_without_a_final_newline_keeps_it_without_one(root, apply_patch, text):
    (root / "f.txt").write_bytes(b"a\nb")
    error, said = await apply_patch(text)
    assert not error, said
    assert (root / "f.txt").read_bytes() == b"a\nb\nc"


# Inputs that took minutes to hours of one core before any path was checked; finishing at all is
# the test (old code: the 4.8 KB block took 84 s, and the work grew with the cube of its size).
async def test_a_large_repetitive_block_is_read_in_linear_work(root, apply_patch):
    n = 20_000  # 40 KB of SEARCH
    (root / "x.txt").write_text("x\n" * n)
    error, said = await apply_patch("x.txt\n<<<<<<< SEARCH\n" + "x\n" * n + "=======\n" + "x\ny\n" * (n // 2) + ">>>>>>> REPLACE\n")
    assert not error, said
    assert (root / "x.txt").read_text() == "x\ny\n" * (n // 2)


async def test_a_header_with_a_long_run_of_blanks_is_read_in_linear_work(root, apply_patch):
    # The timestamp pattern backtracked over every blank (20,000 spaces: 22.8 s; 200,000: hours).
    (root / "a.txt").write_text("one\n")
    name = "a.txt" + " " * 200_000 + "x"
    error, said = await apply_patch(f"--- {name}\n+++ {name}\n@@ -1 +1 @@\n-one\n+ONE\n")
    assert error and said.startswith("INVALID_PARAMS: ") and "PATH_MAX" in said, said[:300]


def _look_alike(kind: str, m: int) -> str:
    old = ["x"] * m + ["y"] if kind.endswith("find") else ["y"] + ["x"] * m
    if kind.startswith("sr"):
        return "big.txt\n<<<<<<< SEARCH\n" + "".join(f"{line}\n" for line in old) + "=======\nz\n>>>>>>> REPLACE\n"
    if kind.startswith("ap"):
        return "*** Begin Patch\n*** Update File: big.txt\n@@\n" + "".join(f"-{line}\n" for line in old) + "+z\n*** End Patch\n"
    return f"--- a/big.txt\n+++ b/big.txt\n@@ -1,{len(old)} +1,1 @@\n" + "".join(f"-{line}\n" for line in old) + "+z\n"


@pytest.mark.parametrize("kind", ["sr_find", "sr_closest", "ap_find", "ud_closest"])
async def test_a_hunk_of_look_alike_lines_on_a_large_file_of_them_is_matched_in_linear_work(root, apply_patch, kind):
    # Every line of the file agrees with most of the hunk's: matching cost the file's lines times
    # the hunk's (20,000 by 1,000 lines: 8 to 53 s; these: hours). Finishing is the test.
    (root / "big.txt").write_text("x\n" * 200_000)
    error, said = await apply_patch(_look_alike(kind, 5_000))
    assert error and said.startswith("PATCH_FAILED: "), said[:300]
    assert kind.endswith("find") or "the search for the closest place stopped after" in said, said[:600]
    assert (root / "big.txt").read_text() == "x\n" * 200_000


async def test_a_patch_failing_in_hundreds_of_blocks_stays_within_the_output_budget(tmp_path, root):
    # format=json carries the failures as data too: every report, untruncated, was 4.6 MB.
    long = "q" * 290
    (root / "f.txt").write_text("".join(f"{long} {i}\n" for i in range(2000)))
    blocks = "".join("f.txt\n<<<<<<< SEARCH\n" + "".join(f"{long} {i + k}x\n" for k in range(16)) + "=======\nz\n>>>>>>> REPLACE\n" for i in range(400))
    async with serve_stdio(str(root), "--format", "json", "--journal", str(tmp_path / "journal"), cwd=root) as client:
        result = await client.call_tool("patch_apply", {"patch": blocks, "dryRun": True})
    assert result.is_error
    assert len(result.model_dump_json()) <= 80_000 + 10_000, len(result.model_dump_json())


async def test_a_name_ending_in_a_slash_makes_no_file_and_a_pipe_is_named_plainly(root, apply_patch):
    error, said = await apply_patch("*** Begin Patch\n*** Add File: newdir/\n+x\n*** End Patch\n")
    assert error and said.startswith("INVALID_PARAMS: ") and "newdir/" in said, said
    assert not (root / "newdir").exists()
    os.mkfifo(root / "pipe")
    error, said = await apply_patch("*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch\n")
    assert error and said.startswith("NOT_FILE: ") and " a other" not in said, said


def _envelope(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (_envelope("*** Add File: q\n+x\n", "*** Add File: q/r.txt\n+y\n"), "NOT_DIRECTORY"),
        (_envelope("*** Add File: q/r.txt\n+y\n", "*** Add File: q\n+x\n"), "NOT_FILE"),
        (_envelope("*** Update File: b.txt\n*** Move to: dd\n", "*** Add File: dd/x.txt\n+y\n"), "NOT_DIRECTORY"),
        (_envelope("*** Add File: dd/x.txt\n+y\n", "*** Update File: b.txt\n*** Move to: dd\n"), "ALREADY_EXISTS"),
    ],
    ids=["file-then-inside", "inside-then-file", "move-then-inside", "inside-then-move"],
)
async def test_a_dry_run_fails_as_the_real_call_does_when_one_section_makes_room_for_another(tmp_path, root, text, code):
    # The plan models what earlier sections make: a file where a later one needs a directory.
    (root / "b.txt").write_text("b\n")
    before = tree_of(root)
    async with serve_stdio(str(root), "--journal", str(tmp_path / "journal"), cwd=root) as client:
        s = ToolCalls(client)
        for dry in (True, False):
            await s.fail("patch_apply", code, patch=text, dryRun=dry)
    assert tree_of(root) == before
