"""Byte-exactness: line endings, a BOM, a missing final newline and non-UTF-8 bytes survive a patch."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


def lf_diff(name: str, body: str) -> str:
    return f"--- a/{name}\n+++ b/{name}\n{body}"


async def test_an_lf_diff_on_a_crlf_file_matches_and_writes_crlf(root, apply_patch):
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")

    error, text = await apply_patch(lf_diff("w.txt", "@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n"))

    assert not error, text
    assert (root / "w.txt").read_bytes() == b"one\r\nTWO\r\n2.5\r\nthree\r\n"


async def test_a_patch_sent_with_crlf_everywhere_keeps_an_lf_file_lf(root, apply_patch):
    (root / "u.txt").write_bytes(b"one\ntwo\n")
    diff = lf_diff("u.txt", "@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n")

    error, text = await apply_patch("\r\n".join(diff.split("\n")))

    assert not error, text
    assert (root / "u.txt").read_bytes() == b"one\nTWO\n"


async def test_a_bom_is_kept(root, apply_patch):
    (root / "b.txt").write_bytes(b"\xef\xbb\xbffirst\nsecond\n")

    error, text = await apply_patch(lf_diff("b.txt", "@@ -1,2 +1,2 @@\n-first\n+FIRST\n second\n"))

    assert not error, text
    assert (root / "b.txt").read_bytes() == b"\xef\xbb\xbfFIRST\nsecond\n"


async def test_a_missing_final_newline_is_kept_when_the_diff_does_not_mention_it(root, apply_patch):
    (root / "n.txt").write_bytes(b"a\nb\nlast")

    error, text = await apply_patch(lf_diff("n.txt", "@@ -2,2 +2,2 @@\n b\n-last\n+LAST\n"))

    assert not error, text
    assert (root / "n.txt").read_bytes() == b"a\nb\nLAST"


async def test_adding_after_a_last_line_without_newline(root, apply_patch):
    (root / "n.txt").write_bytes(b"a\nb")

    error, text = await apply_patch(lf_diff("n.txt", "@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"))

    assert not error, text
    assert (root / "n.txt").read_bytes() == b"a\nb\nc\n"


async def test_a_latin1_file_matches_its_text_and_keeps_its_bytes(root, apply_patch):
    (root / "l.txt").write_bytes(b"caf\xe9\nna\xefve\nend\n")

    error, text = await apply_patch(lf_diff("l.txt", "@@ -1,3 +1,3 @@\n café\n-naïve\n+naïf\n end\n"))

    assert not error, text
    assert text == f"patched {root / 'l.txt'} (1 hunk, not UTF-8, matched as cp1252 text)"
    assert (root / "l.txt").read_bytes() == b"caf\xe9\nna\xeff\nend\n"


async def test_bytes_that_are_not_utf8_outside_the_hunk_are_untouched(root, apply_patch):
    (root / "x.bin.txt").write_bytes(b"\xff\xfe odd\nplain\nmore\n")

    error, text = await apply_patch(lf_diff("x.bin.txt", "@@ -2,2 +2,2 @@\n-plain\n+PLAIN\n more\n"))

    assert not error, text
    assert (root / "x.bin.txt").read_bytes() == b"\xff\xfe odd\nPLAIN\nmore\n"


async def test_undecodable_bytes_are_shown_escaped_in_a_failure(root, apply_patch):
    (root / "x.txt").write_bytes(b"a\n\x81\x8d\x90 raw\nc\n")

    error, text = await apply_patch(lf_diff("x.txt", "@@ -1,3 +1,3 @@\n a\n-other\n+new\n c\n"))

    assert error
    assert "  ! 2 | \\x81\\x8d\\x90 raw" in text
