"""word_count through the real MCP client, against a host that loads only this plugin.

``root``, ``outside``, ``call`` and ``server`` are fsmcp.testing's fixtures; conftest.py says
which plugin they load.
"""

import os

import pytest

from fsmcp.testing import text_of
from fsmcp_wordcount import tools


@pytest.mark.anyio
async def test_counts_like_wc(root, call):
    (root / "notes.txt").write_text("héllo wörld\n  second   line\n")
    result = await call("word_count", {"path": str(root / "notes.txt")})
    assert not result.is_error
    assert text_of(result) == f"{root}/notes.txt: 2 lines, 4 words, 30 bytes, 28 characters"


@pytest.mark.anyio
async def test_singular_and_empty(root, call):
    (root / "one").write_text("x\n")
    (root / "empty").write_bytes(b"")
    assert text_of(await call("word_count", {"path": "one"})).endswith(": 1 line, 1 word, 2 bytes, 2 characters")
    assert text_of(await call("word_count", {"path": "empty"})).endswith(": 0 lines, 0 words, 0 bytes, 0 characters")


@pytest.mark.anyio
async def test_a_last_line_without_newline_is_not_a_line(root, call):
    (root / "f").write_text("a b\nc")
    assert text_of(await call("word_count", {"path": "f"})).endswith(": 1 line, 3 words, 5 bytes, 5 characters")


@pytest.mark.anyio
async def test_words_and_characters_split_across_chunks(root, call):
    # A two-byte character straddles the chunk boundary inside a word that does too.
    straddling = b"x" * (tools.CHUNK - 1) + "é".encode() + b"yz foo\n"
    (root / "straddling").write_bytes(straddling)
    # A space ends the first chunk: the word after it is a new word.
    spaced = b"a" * (tools.CHUNK - 1) + b" " + b"b\n"
    (root / "spaced").write_bytes(spaced)
    out = text_of(await call("word_count", {"path": "straddling"}))
    assert out.endswith(f": 1 line, 2 words, {len(straddling)} bytes, {len(straddling) - 1} characters")
    out = text_of(await call("word_count", {"path": "spaced"}))
    assert out.endswith(f": 1 line, 2 words, {len(spaced)} bytes, {len(spaced)} characters")


@pytest.mark.anyio
async def test_invalid_utf8_counts_one_character_per_bad_sequence(root, call):
    (root / "latin1.txt").write_bytes("café crème\n".encode("latin-1"))
    assert text_of(await call("word_count", {"path": "latin1.txt"})).endswith(": 1 line, 2 words, 11 bytes, 11 characters")


@pytest.mark.anyio
async def test_progress_is_reported_for_big_files(root, monkeypatch, call):
    monkeypatch.setattr(tools, "PROGRESS_EVERY", tools.CHUNK)
    (root / "big").write_bytes(b"word " * (tools.CHUNK // 2))
    seen = []

    async def on_progress(done, total, message):
        seen.append((done, total))

    result = await call("word_count", {"path": "big"}, progress=on_progress)
    assert not result.is_error
    size = 5 * (tools.CHUNK // 2)
    assert seen and seen[-1][1] == size and all(done <= size for done, _ in seen)


@pytest.mark.anyio
async def test_the_legacy_name_file_is_accepted(root, call):
    (root / "f").write_text("one two\n")
    assert text_of(await call("word_count", {"file": "f"})).endswith(": 1 line, 2 words, 8 bytes, 8 characters")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"path": "missing.txt"}, "NOT_FOUND"),
        ({"path": "."}, "NOT_FILE"),
        ({"path": "/etc/hostname"}, "ACCESS_DENIED"),
        ({"path": "../outside/secret.txt"}, "ACCESS_DENIED"),
        ({}, "INVALID_PARAMS"),
        ({"path": "f", "lines": True}, "INVALID_PARAMS"),
    ],
)
async def test_failures_lead_with_their_code(root, outside, arguments, code, call):
    (root / "f").write_text("x\n")
    result = await call("word_count", arguments)
    assert result.is_error
    assert text_of(result).startswith(f"{code}: ")


@pytest.mark.anyio
async def test_a_named_pipe_is_refused_not_waited_on(root, call):
    os.mkfifo(root / "pipe")
    result = await call("word_count", {"path": "pipe"})
    assert result.is_error
    assert text_of(result).startswith("NOT_FILE: ")


@pytest.mark.anyio
async def test_listed_read_only_with_camel_case_schema(server):
    async with server() as calls:
        (tool,) = (await calls.client.list_tools()).tools
    assert tool.name == "word_count"
    assert tool.annotations.read_only_hint and not tool.annotations.destructive_hint
    assert tool.input_schema["required"] == ["path"]
    assert set(tool.input_schema["properties"]) == {"path"}
