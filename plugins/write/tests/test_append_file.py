"""append_file: newline handling, create, errors, and a failed append cut back."""

from __future__ import annotations

import errno
import os
import stat

import anyio
import fsmcp.paths.fs
import pytest

pytestmark = pytest.mark.anyio


async def test_appends_with_a_newline_by_default(server, root):
    log = root / "log.txt"
    log.write_text("first\n")
    async with server() as s:
        text = await s.ok("append_file", path="log.txt", content="second")
        await s.ok("append_file", path="log.txt", content="third\n")
    assert log.read_text() == "first\nsecond\nthird\n"
    assert text == f"Successfully appended 7 bytes to {log} (now 13 bytes)"


async def test_ensure_newline_false_appends_exactly(server, root):
    log = root / "log.txt"
    log.write_text("a")
    async with server() as s:
        await s.ok("append_file", path="log.txt", content="b", ensureNewline=False)
    assert log.read_text() == "ab"


async def test_crlf_content_gets_a_crlf_ending(server, root):
    log = root / "log.txt"
    log.write_bytes(b"x\r\n")
    async with server() as s:
        await s.ok("append_file", path="log.txt", content="y\r\nz")
    assert log.read_bytes() == b"x\r\ny\r\nz\r\n"


async def test_empty_content_appends_nothing(server, root):
    log = root / "log.txt"
    log.write_text("same")
    async with server() as s:
        text = await s.ok("append_file", path="log.txt", content="")
    assert log.read_text() == "same"
    assert "0 bytes" in text


async def test_a_missing_file_is_not_found_with_a_hint(server, root):
    async with server() as s:
        text = await s.fail("append_file", "NOT_FOUND", path="nope.txt", content="x")
    assert "create: true" in text
    assert not (root / "nope.txt").exists()


async def test_create_true_makes_the_file_and_its_parents(server, root):
    async with server() as s:
        text = await s.ok("append_file", path="logs/new.log", content="hello", create=True)
        again = await s.ok("append_file", path="logs/new.log", content="world", create=True)
    target = root / "logs" / "new.log"
    assert target.read_text() == "hello\nworld\n"
    assert text == f"Successfully appended 6 bytes to {target} (created; now 6 bytes)"
    assert "created" not in again


async def test_a_directory_is_not_a_file(server, root):
    (root / "d").mkdir()
    async with server() as s:
        await s.fail("append_file", "NOT_FILE", path="d", content="x")


async def test_growing_past_max_file_bytes_is_file_too_large(server, root):
    log = root / "log.txt"
    log.write_text("12345")
    async with server(root, max_file_bytes=8) as s:
        await s.fail("append_file", "FILE_TOO_LARGE", path="log.txt", content="6789")
    assert log.read_text() == "12345"


async def test_a_failed_append_is_cut_back(server, root, monkeypatch):
    log = root / "log.txt"
    log.write_bytes(b"old\n")
    real_write = os.write

    def half_then_full_disk(fd, data):
        if bytes(data).startswith(b"NEW"):
            real_write(fd, bytes(data)[:4])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    async with server() as s:
        monkeypatch.setattr(fsmcp.paths.fs.os, "write", half_then_full_disk)
        await s.fail("append_file", "INTERNAL_ERROR", path="log.txt", content="NEW DATA")
        monkeypatch.undo()
    assert log.read_bytes() == b"old\n"


async def test_invalid_text_and_directory_syntax_are_invalid_params(server, root):
    (root / "log.txt").write_text("log")
    async with server() as s:
        await s.fail("append_file", "INVALID_PARAMS", path="log.txt", content="\udc80")
        await s.fail("append_file", "INVALID_PARAMS", path="logs/", content="x", create=True)
    assert (root / "log.txt").read_text() == "log"
    assert sorted(p.name for p in root.iterdir()) == ["log.txt"]


async def test_a_file_in_the_parent_chain_is_not_a_directory(server, root):
    (root / "f.txt").write_text("f")
    async with server() as s:
        await s.fail("append_file", "NOT_DIRECTORY", path="f.txt/log", content="x", create=True)
    assert (root / "f.txt").read_text() == "f"


async def test_a_pipe_is_refused_at_once_not_waited_on(server, root):
    os.mkfifo(root / "pipe")
    async with server() as s:
        with anyio.fail_after(30):
            await s.fail("append_file", "NOT_FILE", path="pipe", content="x")
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode)
