"""delete_file: files, directories, links (never their targets), and roots that are never deleted."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_deletes_a_file(server, root):
    (root / "a.txt").write_text("a")
    async with server() as s:
        text = await s.ok("delete_file", path="a.txt")
    assert not (root / "a.txt").exists()
    assert text == f"Successfully deleted file {root / 'a.txt'}"


async def test_deletes_an_empty_directory(server, root):
    (root / "empty").mkdir()
    async with server() as s:
        text = await s.ok("delete_file", path="empty")
    assert not (root / "empty").exists()
    assert text == f"Successfully deleted directory {root / 'empty'}"


async def test_a_non_empty_directory_needs_recursive(server, root):
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "e" / "f.txt").write_text("f")
    async with server() as s:
        text = await s.fail("delete_file", "DIRECTORY_NOT_EMPTY", path="d")
        assert "recursive: true" in text
        assert (root / "d" / "e" / "f.txt").exists()
        text = await s.ok("delete_file", path="d", recursive=True)
    assert not (root / "d").exists()
    assert text == f"Successfully deleted directory {root / 'd'} and everything in it"


async def test_a_link_is_deleted_never_its_target(server, root):
    (root / "target").mkdir()
    (root / "target" / "keep.txt").write_text("keep")
    (root / "link").symlink_to("target")
    async with server() as s:
        text = await s.ok("delete_file", path="link/", recursive=True)
    assert not (root / "link").is_symlink()
    assert (root / "target" / "keep.txt").read_text() == "keep"
    assert text == f"Successfully deleted link {root / 'link'} (the link only; its target was not touched)"


async def test_a_missing_path_is_not_found(server, root):
    async with server() as s:
        await s.fail("delete_file", "NOT_FOUND", path="ghost.txt")


async def test_a_dangling_link_can_be_deleted(server, root):
    (root / "dangling").symlink_to("nowhere")
    async with server() as s:
        await s.ok("delete_file", path="dangling")
    assert not (root / "dangling").is_symlink()


async def test_a_file_in_the_path_is_not_a_directory(server, root):
    (root / "f.txt").write_text("f")
    async with server() as s:
        await s.fail("delete_file", "NOT_DIRECTORY", path="f.txt/x")
    assert (root / "f.txt").read_text() == "f"
