"""read_file end to end: formats, parts, encodings, aliases, notes and every error it gives."""

from __future__ import annotations

import base64
import os
import re

import anyio
import pytest
from mcp import types

pytestmark = pytest.mark.anyio

NUMBERS = "".join(f"{i}\n" for i in range(1, 101))


@pytest.fixture
def numbers(root):
    (root / "n.txt").write_text(NUMBERS)
    return "n.txt"


# -- whole files, bytes kept ----------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"a\r\nb\r\nc", b"\xef\xbb\xbfbom first\n", b"no final newline", b"tabs\tand \x1b[1mansi\x1b[0m\n", "ünïcødé ✓\n".encode()],
)
async def test_text_comes_back_exactly(root, call, texts, raw):
    (root / "f.txt").write_bytes(raw)
    parts = texts(await call("read_file", {"path": "f.txt"}))
    assert parts == [raw.decode("utf-8")]


async def test_absolute_path_and_file_alias(root, call, texts, numbers):
    assert texts(await call("read_file", {"path": str(root / numbers)}))[0] == NUMBERS
    assert texts(await call("read_file", {"file": numbers}))[0] == NUMBERS


async def test_empty_file_says_so(root, call, texts):
    (root / "empty").write_bytes(b"")
    assert texts(await call("read_file", {"path": "empty"})) == ["", "[note: the file is empty]"]


async def test_latin1_text_is_text_with_replacements_and_a_note(root, call, texts):
    raw = "Le café est très bon.\nÇa va?\n".encode("latin-1")
    (root / "latin1.txt").write_bytes(raw)
    content, note = texts(await call("read_file", {"path": "latin1.txt"}))
    assert content == raw.decode("utf-8", "replace")
    assert content.count("\ufffd") == 3
    assert "3 byte(s)" in note and "U+FFFD" in note and "base64" in note


async def test_base64_and_hex_return_the_exact_bytes(root, call, texts):
    raw = "crlf\r\nlatin-1 é\n".encode("latin-1") + b"\xef\xbb\xbf"
    (root / "mixed.txt").write_bytes(raw)
    assert base64.b64decode(texts(await call("read_file", {"path": "mixed.txt", "encoding": "base64"}))[0]) == raw
    assert bytes.fromhex(texts(await call("read_file", {"path": "mixed.txt", "encoding": "hex"}))[0]) == raw


# -- binary ---------------------------------------------------------------------------------


async def test_png_is_image_content(root, call, png):
    (root / "pixel.png").write_bytes(png)
    result = await call("read_file", {"path": "pixel.png"})
    assert not result.is_error
    image, caption = result.content
    assert isinstance(image, types.ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png
    assert "image/png" in caption.text and f"{len(png)} bytes" in caption.text


async def test_png_without_extension_is_sniffed(root, call, png):
    (root / "picture").write_bytes(png)
    result = await call("read_file", {"path": "picture"})
    assert isinstance(result.content[0], types.ImageContent)


async def test_other_binary_is_a_blob_resource(root, call):
    raw = bytes(range(256)) * 4
    (root / "data.bin").write_bytes(raw)
    result = await call("read_file", {"path": "data.bin"})
    blob = result.content[0]
    assert isinstance(blob, types.EmbeddedResource)
    assert blob.resource.mime_type == "application/octet-stream"
    assert str(blob.resource.uri) == (root / "data.bin").as_uri()
    assert base64.b64decode(blob.resource.blob) == raw


async def test_pdf_is_binary_even_when_its_header_is_ascii(root, call):
    (root / "doc.pdf").write_bytes(b"%PDF-1.7\n" + b"1 0 obj << /Type /Catalog >> endobj\n" * 20)
    blob = (await call("read_file", {"path": "doc.pdf"})).content[0]
    assert isinstance(blob, types.EmbeddedResource) and blob.resource.mime_type == "application/pdf"


async def test_utf8_forces_text_on_binary(root, call, texts):
    (root / "nul.bin").write_bytes(b"a\x00b\n")
    assert texts(await call("read_file", {"path": "nul.bin", "encoding": "utf-8"}))[0] == "a\x00b\n"


async def test_binary_over_max_file_bytes_needs_a_range(root, call, failure):
    raw = b"\x00" * 3000
    (root / "big.bin").write_bytes(raw)
    result = await call("read_file", {"path": "big.bin"}, max_file_bytes=2000)
    assert failure(result) == "FILE_TOO_LARGE"
    assert "offset" in result.content[0].text and "base64" in result.content[0].text
    part = await call("read_file", {"path": "big.bin", "offset": 1000, "length": 1500}, max_file_bytes=2000)
    assert base64.b64decode(part.content[0].resource.blob) == raw[1000:2500]
    over = await call("read_file", {"path": "big.bin", "offset": 0, "length": 2500}, max_file_bytes=2000)
    assert failure(over) == "FILE_TOO_LARGE"


# -- line ranges ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"startLine": 5, "endLine": 7}, "5\n6\n7\n"),
        ({"startLine": 99}, "99\n100\n"),
        ({"endLine": 2}, "1\n2\n"),
        ({"head": 3}, "1\n2\n3\n"),
        ({"tail": 2}, "99\n100\n"),
        ({"head": 500}, NUMBERS),
        ({"tail": 500}, NUMBERS),
        ({"lineRange": "10-11"}, "10\n11\n"),
        ({"line_range": "10-11"}, "10\n11\n"),
        ({"lineRange": "98-"}, "98\n99\n100\n"),
        ({"lineRange": "42"}, "42\n"),
        ({"lineRange": "3:4"}, "3\n4\n"),
        ({"range": {"lines": {"from": 3, "to": 4}}}, "3\n4\n"),
        ({"lineRange": "10-11", "startLine": 50, "endLine": 50}, "50\n"),
    ],
)
async def test_line_selection(call, texts, numbers, args, expected):
    assert texts(await call("read_file", {"path": numbers, **args}))[0] == expected


async def test_line_numbers_are_the_real_ones(call, texts, numbers):
    assert texts(await call("read_file", {"path": numbers, "startLine": 9, "endLine": 10, "lineNumbers": True}))[0] == "9 | 9\n10 | 10\n"
    assert texts(await call("read_file", {"path": numbers, "tail": 2, "lineNumbers": True}))[0] == "99 | 99\n100 | 100\n"
    assert texts(await call("read_file", {"path": numbers, "head": 1, "lineNumbers": True}))[0] == "1 | 1\n"


async def test_crlf_lines_keep_their_endings(root, call, texts):
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert texts(await call("read_file", {"path": "crlf.txt", "startLine": 2, "lineNumbers": True}))[0] == "2 | two\r\n3 | three\r\n"
    assert texts(await call("read_file", {"path": "crlf.txt", "tail": 1}))[0] == "three\r\n"


async def test_tail_without_final_newline(root, call, texts):
    (root / "t.txt").write_bytes(b"a\nb\nc")
    assert texts(await call("read_file", {"path": "t.txt", "tail": 2}))[0] == "b\nc"
    assert texts(await call("read_file", {"path": "t.txt", "startLine": 3}))[0] == "c"


async def test_end_past_the_end_is_clamped_with_a_note(call, texts, numbers):
    content, note = texts(await call("read_file", {"path": numbers, "startLine": 99, "endLine": 500}))
    assert content == "99\n100\n"
    assert note == "[note: the file has 100 lines; endLine=500 was clamped to 100]"


async def test_start_past_the_end_is_empty_with_a_note(call, texts, numbers):
    content, note = texts(await call("read_file", {"path": numbers, "startLine": 101}))
    assert content == ""
    assert note == "[note: the file has 100 lines; startLine=101 is past its end]"


# -- byte ranges ----------------------------------------------------------------------------


async def test_byte_ranges(call, texts, numbers):
    raw = NUMBERS.encode()
    assert texts(await call("read_file", {"path": numbers, "offset": 4, "length": 6}))[0] == raw[4:10].decode()
    assert texts(await call("read_file", {"path": numbers, "offset": 280}))[0] == raw[280:].decode()
    assert texts(await call("read_file", {"path": numbers, "length": 4}))[0] == "1\n2\n"
    assert texts(await call("read_file", {"path": numbers, "range": {"start": 2, "end": 6}}))[0] == raw[2:6].decode()
    assert bytes.fromhex(texts(await call("read_file", {"path": numbers, "offset": 2, "length": 3, "encoding": "hex"}))[0]) == raw[2:5]


async def test_byte_range_past_the_end_is_clamped_with_a_note(call, texts, numbers):
    size = len(NUMBERS)
    content, note = texts(await call("read_file", {"path": numbers, "offset": size - 4, "length": 100}))
    assert content == "100\n"
    assert note == f"[note: the file is {size} bytes; the range was clamped to bytes {size - 4}-{size - 1}]"
    content, note = texts(await call("read_file", {"path": numbers, "offset": size + 10}))
    assert content == ""
    assert note == f"[note: the file is {size} bytes; offset={size + 10} is past its end]"


async def test_line_numbers_on_a_byte_range_count_from_the_file_start(call, texts, numbers):
    start = NUMBERS.index("50\n")
    assert texts(await call("read_file", {"path": numbers, "offset": start, "length": 6, "lineNumbers": True}))[0] == "50 | 50\n51 | 51\n"


# -- maxBytes -------------------------------------------------------------------------------


async def test_max_bytes_refuses_a_whole_read_but_not_a_range(call, texts, failure, numbers):
    result = await call("read_file", {"path": numbers, "maxBytes": 100})
    assert failure(result) == "FILE_TOO_LARGE"
    assert "startLine" in result.content[0].text and "maxBytes" in result.content[0].text
    assert texts(await call("read_file", {"path": numbers, "maxBytes": 100, "head": 1}))[0] == "1\n"
    assert texts(await call("read_file", {"path": numbers, "maxBytes": 10_000}))[0] == NUMBERS


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"head": 1, "tail": 1}, "head and tail"),
        ({"startLine": 1, "offset": 0}, "startLine"),
        ({"tail": 3, "length": 2}, "tail"),
        ({"head": 3, "startLine": 2}, "head"),
        ({"startLine": 5, "endLine": 4}, "startLine (5) is after endLine (4)"),
        ({"lineNumbers": True, "encoding": "base64"}, "lineNumbers"),
        ({"head": 0}, "head"),
        ({"startLine": 0}, "startLine"),
        ({"offset": -1}, "offset"),
        ({"encoding": "latin-1"}, "encoding"),
        ({"lineRange": "ten to twenty"}, "lineRange"),
        ({"range": "0-10"}, "range"),
        ({"lines": 5}, "unknown parameter"),
    ],
)
async def test_invalid_params(call, failure, numbers, args, words):
    result = await call("read_file", {"path": numbers, **args})
    assert failure(result) == "INVALID_PARAMS"
    assert words in result.content[0].text


async def test_not_found_and_not_file(root, call, failure):
    (root / "dir").mkdir()
    assert failure(await call("read_file", {"path": "missing.txt"})) == "NOT_FOUND"
    assert failure(await call("read_file", {"path": "dir"})) == "NOT_FILE"
    assert failure(await call("read_file", {})) == "INVALID_PARAMS"


# -- the budget and continuing --------------------------------------------------------------

BUDGET = 1000  # the smallest the host allows: a few calls walk through a small file


def _continuation(note: str) -> dict:
    found = re.search(r"continue with (startLine=\d+(?:, endLine=\d+)?|offset=\d+(?:, length=\d+)?)", note)
    assert found, note
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", found[1])}


async def _read_all(call, path: str, extra: dict) -> tuple[str, int]:
    args, pieces, calls = {}, [], 0
    while True:
        calls += 1
        result = await call("read_file", {"path": path, **extra, **args}, budget=BUDGET)
        parts = [b.text for b in result.content]
        assert not result.is_error, parts
        assert sum(map(len, parts)) <= BUDGET
        pieces.append(parts[0])
        if len(parts) == 1 or "truncated" not in parts[1]:
            return "".join(pieces), calls
        args = _continuation(parts[1])


async def test_continuations_walk_through_the_whole_file(root, call):
    text = "".join(f"line {i} ünïcødé\r\n" for i in range(120)) + "é" * 3000 + "\n" + "tail line\n"
    (root / "long.txt").write_text(text, newline="")
    joined, calls = await _read_all(call, "long.txt", {})
    assert joined == text
    assert calls > 5


async def test_continuations_keep_the_end_line(root, call):
    (root / "n.txt").write_text(NUMBERS * 10)
    joined, calls = await _read_all(call, "n.txt", {"startLine": 50, "endLine": 700})
    assert joined == "".join((NUMBERS * 10).splitlines(keepends=True)[49:700])
    assert calls > 1


async def test_base64_continuations_give_the_exact_bytes(root, call):
    raw = bytes(range(256)) * 20
    (root / "b.bin").write_bytes(raw)
    pieces, args = [], {}
    while True:
        result = await call("read_file", {"path": "b.bin", "encoding": "base64", **args}, budget=BUDGET)
        parts = [b.text for b in result.content]
        pieces.append(base64.b64decode(parts[0]))
        if len(parts) == 1:
            break
        args = _continuation(parts[1].replace(", encoding=base64", ""))
    assert b"".join(pieces) == raw


async def test_a_line_longer_than_the_budget_is_cut_inside_with_an_offset(root, call, texts):
    (root / "one.txt").write_text("x" * 5000)
    content, note = texts(await call("read_file", {"path": "one.txt"}, budget=BUDGET))
    assert content == "x" * len(content) and 0 < len(content) < BUDGET
    assert f"continue with offset={len(content)}" in note


async def test_tail_over_the_budget_shows_the_last_lines(root, call, texts):
    (root / "n.txt").write_text(NUMBERS * 5)
    content, note = texts(await call("read_file", {"path": "n.txt", "tail": 400, "lineNumbers": True}, budget=BUDGET))
    lines = content.splitlines()
    assert lines[-1] == "500 | 100"
    assert len(lines) < 400
    first = int(lines[0].split(" | ")[0])
    assert f"startLine={500 - 400 + 1}, endLine={first - 1}" in note


async def test_tail_over_the_budget_without_numbers_points_at_bytes(root, call, texts):
    text = NUMBERS * 5
    (root / "n.txt").write_text(text)
    content, note = texts(await call("read_file", {"path": "n.txt", "tail": 400}, budget=BUDGET))
    start = len(text) - len(content)
    assert text.endswith(content)
    earlier = len("".join(text.splitlines(keepends=True)[-400:])) - len(content)
    assert f"read with offset={start - earlier}, length={earlier}]" in note


async def test_tail_of_one_huge_line_shows_its_end(root, call, texts):
    (root / "one.txt").write_text("a" * 3000 + "z" * 100 + "\n")
    content, note = texts(await call("read_file", {"path": "one.txt", "tail": 1}, budget=BUDGET))
    assert content.endswith("z" * 100 + "\n") and len(content) < BUDGET
    assert f"bytes {3101 - len(content)}-3100" in note


async def test_hex_of_lines_cut_on_a_line_boundary(call, texts, numbers):
    content, note = texts(await call("read_file", {"path": numbers, "head": 100, "encoding": "hex"}, budget=BUDGET))
    shown = bytes.fromhex(content).decode()
    assert NUMBERS.startswith(shown) and shown.endswith("\n")
    next_line = shown.count("\n") + 1
    assert f"continue with startLine={next_line}, endLine=100, encoding=hex" in note


async def test_tail_in_base64_over_the_budget_keeps_the_last_bytes(root, call, texts):
    raw = bytes(range(11, 256)) * 10  # no newline: the last line is the whole file
    (root / "b.bin").write_bytes(raw)
    content, note = texts(await call("read_file", {"path": "b.bin", "tail": 1, "encoding": "base64"}, budget=BUDGET))
    shown = base64.b64decode(content)
    assert raw.endswith(shown) and 0 < len(shown) < len(raw)
    assert f"offset={len(raw) - len(shown)}" in note


async def test_byte_range_continuation_keeps_the_length(call, texts, numbers):
    content, note = texts(await call("read_file", {"path": numbers, "offset": 0, "length": 280, "encoding": "hex"}, budget=BUDGET))
    shown = len(bytes.fromhex(content))
    assert f"continue with offset={shown}, length={280 - shown}, encoding=hex" in note


async def test_a_link_inside_the_root_is_followed(root, call, texts, numbers):
    (root / "alias.txt").symlink_to(numbers)
    assert texts(await call("read_file", {"path": "alias.txt", "head": 1}))[0] == "1\n"


async def test_a_named_pipe_is_refused_not_waited_on(root, call, texts, failure):
    os.mkfifo(root / "pipe")
    with anyio.fail_after(30):  # a safety net only: opening a pipe for reading would block
        assert failure(await call("read_file", {"path": "pipe"})) == "NOT_FILE"
        (part,) = texts(await call("read_multiple_files", {"paths": ["pipe"]}))
        assert part.startswith("pipe:\n[error: NOT_FILE ")
        assert texts(await call("list_directory", {"path": "."})) == ["[OTHER] pipe"]
        assert texts(await call("get_file_info", {"path": "pipe"}))[0].startswith("type: other\nsize: 0\n")
