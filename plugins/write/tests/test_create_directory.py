"""create_directory: mkdir -p, idempotent, and a file in the way."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_creates_nested_directories(server, root):
    async with server() as s:
        text = await s.ok("create_directory", path="a/b/c")
    assert (root / "a" / "b" / "c").is_dir()
    assert text == f"Successfully created directory {root / 'a' / 'b' / 'c'}"


async def test_an_existing_directory_is_fine_and_unchanged(server, root):
    (root / "d").mkdir()
    (root / "d" / "keep.txt").write_text("keep")
    async with server() as s:
        text = await s.ok("create_directory", path=str(root / "d"))
    assert text == f"Directory {root / 'd'} already exists; nothing changed"
    assert (root / "d" / "keep.txt").read_text() == "keep"


async def test_dir_is_a_silent_alias_of_path(server, root):
    async with server() as s:
        await s.ok("create_directory", dir="via/alias")
    assert (root / "via" / "alias").is_dir()


async def test_an_existing_file_is_not_a_directory(server, root):
    (root / "f").write_text("data")
    async with server() as s:
        text = await s.fail("create_directory", "NOT_DIRECTORY", path="f")
    assert "delete the file first" in text
    assert (root / "f").read_text() == "data"


async def test_a_file_in_the_middle_is_not_a_directory(server, root):
    (root / "f").write_text("data")
    async with server() as s:
        await s.fail("create_directory", "NOT_DIRECTORY", path="f/sub/deeper")
    assert (root / "f").read_text() == "data"


async def test_a_link_to_a_directory_inside_counts_as_existing(server, root):
    (root / "real").mkdir()
    (root / "alias").symlink_to("real")
    async with server() as s:
        text = await s.ok("create_directory", path="alias/new")
    assert (root / "real" / "new").is_dir()
    assert str(root / "real" / "new") in text


async def test_an_empty_path_is_invalid_params(server, root):
    async with server() as s:
        await s.fail("create_directory", "INVALID_PARAMS", path="")
        await s.fail("create_directory", "INVALID_PARAMS")


async def test_recursive_false_needs_the_parent(server, root):
    async with server() as s:
        await s.fail("create_directory", "NOT_FOUND", path="a/b/c", recursive=False)
        await s.ok("create_directory", path="a", recursive=False)
    assert (root / "a").is_dir() and not (root / "a" / "b").exists()
