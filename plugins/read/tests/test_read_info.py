"""get_file_info and list_allowed_directories."""

from __future__ import annotations

import os
import re

import pytest

pytestmark = pytest.mark.anyio

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def _fields(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines())


async def test_file_info(root, call, texts):
    path = root / "f.txt"
    path.write_text("hello")
    path.chmod(0o640)
    os.utime(path, (1_000_000_000, 1_700_000_000.25))
    (text,) = texts(await call("get_file_info", {"path": "f.txt"}))
    fields = _fields(text)
    assert list(fields) == ["type", "size", "created", "modified", "accessed", "permissions", "version"]
    assert re.fullmatch("[0-9a-f]{16}", fields["version"])
    assert fields["type"] == "file"
    assert fields["size"] == "5"
    assert fields["modified"] == "2023-11-14T22:13:20.250Z"
    assert fields["accessed"] == "2001-09-09T01:46:40.000Z"
    assert fields["permissions"] == "640"
    assert fields["created"] == "unknown" or re.fullmatch(ISO, fields["created"])


async def test_the_version_moves_with_a_same_size_rewrite_at_the_same_time(root, call, texts):
    path = root / "f.txt"
    path.write_text("hello")
    first = _fields(texts(await call("get_file_info", {"path": "f.txt"}))[0])["version"]
    stamp = path.stat().st_mtime_ns
    with open(path, "r+b") as fh:  # in place: same inode, same size, same modification time
        fh.write(b"jello")
    os.utime(path, ns=(stamp, stamp))
    again = _fields(texts(await call("get_file_info", {"path": "f.txt"}))[0])["version"]
    assert path.read_text() == "jello" and path.stat().st_mtime_ns == stamp
    assert again != first


async def test_directory_info(root, call, texts):
    (root / "d").mkdir(mode=0o755)
    fields = _fields(texts(await call("get_file_info", {"path": "d"}))[0])
    assert fields["type"] == "directory"
    assert re.fullmatch(ISO, fields["modified"])


async def test_a_link_is_described_as_itself(root, call, texts):
    (root / "target.txt").write_text("x" * 1000)
    (root / "link").symlink_to("target.txt")
    fields = _fields(texts(await call("get_file_info", {"path": "link"}))[0])
    assert fields["type"] == "symlink"
    assert fields["size"] == str(len("target.txt"))
    assert fields["target"] == "target.txt"


async def test_a_dangling_link_inside_still_has_its_target(root, call, texts):
    (root / "dangling").symlink_to("not-yet")
    fields = _fields(texts(await call("get_file_info", {"path": "dangling"}))[0])
    assert fields["type"] == "symlink" and fields["target"] == "not-yet"


async def test_info_errors(call, failure):
    assert failure(await call("get_file_info", {"path": "missing"})) == "NOT_FOUND"
    assert failure(await call("get_file_info", {"path": "/etc/hostname"})) == "ACCESS_DENIED"
    assert failure(await call("get_file_info", {})) == "INVALID_PARAMS"


async def test_allowed_directories(tmp_path, call, texts):
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    ro.mkdir()
    roots = [str(rw), f"{ro}:ro"]
    assert texts(await call("list_allowed_directories", roots=roots)) == [f"{rw.resolve()} (read-write)\n{ro.resolve()} (read-only)"]
    assert texts(await call("list_allowed_directories", roots=roots, read_only=True)) == [
        f"{rw.resolve()} (read-only)\n{ro.resolve()} (read-only)"
    ]
    assert (await call("list_allowed_directories", {"path": "x"}, roots=roots)).is_error
