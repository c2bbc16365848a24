"""write_file: create, replace, encodings, mode, size cap, and a failed write that changes nothing."""

from __future__ import annotations

import base64
import errno
import os
import stat

import fsmcp.paths.fs
import pytest

pytestmark = pytest.mark.anyio


def temp_files(directory):
    return [p.name for p in directory.iterdir() if "fsmcp-tmp" in p.name]


async def test_creates_a_file_and_its_parents(server, root):
    async with server() as s:
        text = await s.ok("write_file", path="a/b/new.txt", content="héllo\n")
    target = root / "a" / "b" / "new.txt"
    assert target.read_bytes() == "héllo\n".encode()
    assert text == f"Successfully wrote 7 bytes to {target} (created)"


async def test_replaces_an_existing_file(server, root):
    (root / "f.txt").write_text("old content that is longer")
    async with server() as s:
        text = await s.ok("write_file", path=str(root / "f.txt"), content="x")
    assert (root / "f.txt").read_text() == "x"
    assert text == f"Successfully wrote 1 byte to {root / 'f.txt'} (replaced)"


async def test_file_is_a_silent_alias_of_path(server, root):
    async with server() as s:
        await s.ok("write_file", file="alias.txt", content="via alias")
        tools = await s.client.list_tools()
    assert (root / "alias.txt").read_text() == "via alias"
    schema = next(t for t in tools.tools if t.name == "write_file").input_schema
    assert "file" not in schema["properties"]


async def test_base64_writes_bytes(server, root):
    payload = bytes(range(256))
    wrapped = base64.b64encode(payload).decode()
    wrapped = "\n".join(wrapped[i : i + 76] for i in range(0, len(wrapped), 76))
    async with server() as s:
        text = await s.ok("write_file", path="bin.dat", content=wrapped, encoding="base64")
    assert (root / "bin.dat").read_bytes() == payload
    assert "256 bytes" in text


async def test_base64_without_padding_and_url_safe(server, root):
    payload = b"\xfb\xff\xfe?"
    unpadded = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    async with server() as s:
        await s.ok("write_file", path="u.dat", content=unpadded, encoding="base64")
    assert (root / "u.dat").read_bytes() == payload


@pytest.mark.parametrize("bad", ["not base64!", "QUJD*", "A", "ü=="])
async def test_bad_base64_is_invalid_params_and_writes_nothing(server, root, bad):
    (root / "keep.dat").write_bytes(b"keep")
    async with server() as s:
        text = await s.fail("write_file", "INVALID_PARAMS", path="keep.dat", content=bad, encoding="base64")
    assert "base64" in text and "encoding: utf-8" in text
    assert (root / "keep.dat").read_bytes() == b"keep"


async def test_unknown_encoding_and_parameter_are_invalid_params(server, root):
    async with server() as s:
        await s.fail("write_file", "INVALID_PARAMS", path="x.txt", content="x", encoding="latin-1")
        text = await s.fail("write_file", "INVALID_PARAMS", path="x.txt", content="x", mode="append")
        await s.fail("write_file", "INVALID_PARAMS", path="x.txt")
    assert "mode" in text
    assert not (root / "x.txt").exists()


async def test_lone_surrogate_is_invalid_params(server, root):
    async with server() as s:
        await s.fail("write_file", "INVALID_PARAMS", path="s.txt", content="a\ud800b")
    assert not (root / "s.txt").exists()


async def test_mode_is_kept_on_overwrite(server, root):
    target = root / "script.sh"
    target.write_text("old")
    target.chmod(0o640)
    async with server() as s:
        await s.ok("write_file", path="script.sh", content="new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    target.chmod(0o751)
    async with server() as s:
        await s.ok("write_file", path="script.sh", content="newer")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.read_text() == "newer"


async def test_new_file_gets_the_umask_mode(server, root):
    umask = os.umask(0)
    os.umask(umask)
    async with server() as s:
        await s.ok("write_file", path="fresh.txt", content="x")
    assert stat.S_IMODE((root / "fresh.txt").stat().st_mode) == 0o666 & ~umask


async def test_over_max_file_bytes_is_file_too_large(server, root):
    (root / "f.txt").write_text("small")
    async with server(root, max_file_bytes=10) as s:
        text = await s.fail("write_file", "FILE_TOO_LARGE", path="f.txt", content="x" * 11)
        await s.ok("write_file", path="f.txt", content="x" * 10)
    assert "10" in text
    assert (root / "f.txt").read_text() == "x" * 10


async def test_a_directory_is_not_a_file(server, root):
    (root / "d").mkdir()
    async with server() as s:
        await s.fail("write_file", "NOT_FILE", path="d", content="x")
    assert (root / "d").is_dir()


async def test_a_file_in_the_parent_chain_is_not_a_directory(server, root):
    (root / "plain.txt").write_text("plain")
    async with server() as s:
        await s.fail("write_file", "NOT_DIRECTORY", path="plain.txt/inner.txt", content="x")
    assert (root / "plain.txt").read_text() == "plain"


async def test_writing_through_a_link_inside_the_root_replaces_the_target(server, root):
    (root / "real.txt").write_text("old")
    (root / "link.txt").symlink_to("real.txt")
    async with server() as s:
        text = await s.ok("write_file", path="link.txt", content="new")
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "new"
    assert str(root / "real.txt") in text


@pytest.mark.parametrize("failing", ["fsync", "replace"])
async def test_a_failed_write_leaves_the_old_file_byte_for_byte(server, root, monkeypatch, failing):
    target = root / "precious.txt"
    old = b"line one\r\nline two\xff\n"
    target.write_bytes(old)
    target.chmod(0o600)

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    async with server() as s:
        monkeypatch.setattr(fsmcp.paths.fs.os, failing, no_space)
        text = await s.fail("write_file", "INTERNAL_ERROR", path="precious.txt", content="new content")
        monkeypatch.undo()
    assert "no space left" in text and "nothing was changed" in text
    assert target.read_bytes() == old
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert temp_files(root) == []


async def test_a_failed_create_leaves_no_file(server, root, monkeypatch):
    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    async with server() as s:
        monkeypatch.setattr(fsmcp.paths.fs.os, "fsync", no_space)
        await s.fail("write_file", "INTERNAL_ERROR", path="never.txt", content="x")
        monkeypatch.undo()
    assert list(root.iterdir()) == []


async def test_a_trailing_slash_is_refused_not_turned_into_a_file(server, root):
    async with server() as s:
        text = await s.fail("write_file", "INVALID_PARAMS", path="notes/", content="x")
    assert "directory" in text
    assert list(root.iterdir()) == []


async def test_a_pipe_is_not_replaced_by_a_file(server, root):
    os.mkfifo(root / "pipe")
    async with server() as s:
        await s.fail("write_file", "NOT_FILE", path="pipe", content="x")
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode)
