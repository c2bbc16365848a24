"""Byte-exact round trips: an edit changes exactly the edited bytes, compared as raw bytes."""

import pytest

from fsmcp.testing import text_of

pytestmark = pytest.mark.anyio


async def edit_bytes(call, root, data, *edits, dry_run=False):
    path = root / "f.txt"
    path.write_bytes(data)
    result = await call("edit_file", {"path": str(path), "edits": list(edits), "dryRun": dry_run})
    assert not result.is_error, text_of(result)
    return path.read_bytes(), text_of(result)


async def test_crlf_file_keeps_crlf_and_new_lines_take_it(root, call):
    data = b"one\r\ntwo\r\nthree\r\n"
    out, _ = await edit_bytes(call, root, data, {"oldText": "one\ntwo", "newText": "1\n2\n2.5"})
    assert out == b"1\r\n2\r\n2.5\r\nthree\r\n"


async def test_crlf_regex_groups_hold_no_carriage_return(root, call):
    out, _ = await edit_bytes(call, root, b"a\r\nb\r\n", {"oldText": "^(.*)$", "newText": "<$1>", "isRegex": True, "limit": 0})
    assert out == b"<a>\r\n<b>\r\n"


async def test_crlf_line_edits(root, call):
    out, _ = await edit_bytes(
        call,
        root,
        b"a\r\nb\r\nc\r\n",
        {"type": "line", "lineNumber": 2, "action": "replace", "content": "B1\nB2"},
        {"type": "line", "lineNumber": 0, "action": "insert", "content": "end"},
    )
    assert out == b"a\r\nB1\r\nB2\r\nc\r\nend\r\n"


async def test_mixed_line_endings_survive_outside_the_edit(root, call):
    data = b"crlf one\r\nlf two\nlf three\ncrlf four\r\n"
    out, _ = await edit_bytes(call, root, data, {"oldText": "lf two", "newText": "LF 2\nLF 2.5"})
    assert out == b"crlf one\r\nLF 2\nLF 2.5\nlf three\ncrlf four\r\n"
    out, _ = await edit_bytes(call, root, data, {"oldText": "crlf four", "newText": "x\ny"})
    assert out == b"crlf one\r\nlf two\nlf three\nx\r\ny\r\n"


async def test_bom_is_kept_and_not_part_of_the_first_line(root, call):
    data = b"\xef\xbb\xbfkey=1\nother=2\n"
    out, _ = await edit_bytes(call, root, data, {"oldText": "^key", "newText": "KEY", "isRegex": True})
    assert out == b"\xef\xbb\xbfKEY=1\nother=2\n"
    out, _ = await edit_bytes(call, root, data, {"type": "line", "lineNumber": 1, "action": "insert", "content": "# top"})
    assert out == b"\xef\xbb\xbf# top\nkey=1\nother=2\n"


async def test_missing_final_newline_stays_missing(root, call):
    data = b"first\nlast"
    out, _ = await edit_bytes(call, root, data, {"oldText": "last", "newText": "LAST"})
    assert out == b"first\nLAST"
    out, _ = await edit_bytes(call, root, data, {"type": "line", "lineNumber": 0, "action": "insert", "content": "after"})
    assert out == b"first\nlast\nafter"
    out, _ = await edit_bytes(call, root, data, {"type": "line", "lineNumber": -1, "action": "delete"})
    assert out == b"first"


async def test_latin1_bytes_are_untouched_and_shown_escaped(root, call):
    data = b"caf\xe9 cr\xe8me\nprice: 3\nna\xefve\n"
    out, diff = await edit_bytes(call, root, data, {"oldText": "price: 3", "newText": "price: 4"})
    assert out == b"caf\xe9 cr\xe8me\nprice: 4\nna\xefve\n"
    assert " caf\\xe9 cr\\xe8me" in diff and " na\\xefve" in diff


async def test_latin1_bytes_inside_the_edited_line_survive_a_regex(root, call):
    out, _ = await edit_bytes(call, root, b"caf\xe9 = 1\n", {"oldText": r"= (\d)", "newText": "= $1$1", "isRegex": True})
    assert out == b"caf\xe9 = 11\n"


async def test_binary_bytes_round_trip(root, call):
    data = bytes(range(256)) + b"\nmarker\n" + bytes(range(255, -1, -1))
    out, _ = await edit_bytes(call, root, data, {"oldText": "marker", "newText": "MARKER"})
    assert out == data.replace(b"marker", b"MARKER")


async def test_dry_run_leaves_the_bytes_alone(root, call):
    data = b"\xef\xbb\xbfa\r\nb\xe9"
    out, diff = await edit_bytes(call, root, data, {"oldText": "a", "newText": "A"}, dry_run=True)
    assert out == data
    assert "-a\n+A" in diff


async def test_utf16_file_is_refused_untouched(root, call):
    path = root / "w.txt"
    data = "hello\n".encode("utf-16")
    path.write_bytes(data)
    result = await call("edit_file", {"path": str(path), "edits": [{"oldText": "hello", "newText": "bye"}]})
    assert result.is_error and "UTF-16" in text_of(result)
    assert path.read_bytes() == data
