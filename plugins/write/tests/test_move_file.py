"""move_file: rename, across roots and devices, links as links, and refusals that keep the source."""

from __future__ import annotations

import errno
import os

import fsmcp.paths.fs
import pytest

pytestmark = pytest.mark.anyio


async def test_renames_a_file_and_creates_parents(server, root):
    (root / "a.txt").write_text("a")
    async with server() as s:
        text = await s.ok("move_file", source="a.txt", destination="new/place/b.txt")
    assert not (root / "a.txt").exists()
    assert (root / "new" / "place" / "b.txt").read_text() == "a"
    assert text == f"Successfully moved file {root / 'a.txt'} to {root / 'new' / 'place' / 'b.txt'}"


async def test_from_and_to_are_silent_aliases(server, root):
    (root / "a.txt").write_text("a")
    async with server() as s:
        await s.ok("move_file", **{"from": "a.txt", "to": "b.txt"})
    assert (root / "b.txt").read_text() == "a"


async def test_moves_a_directory(server, root, tree_of):
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "e" / "f.txt").write_text("f")
    before = tree_of(root / "d")
    async with server() as s:
        text = await s.ok("move_file", source="d", destination="moved")
    assert tree_of(root / "moved") == before
    assert not (root / "d").exists()
    assert text.startswith("Successfully moved directory ")


async def test_moves_across_roots(server, root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (root / "a.txt").write_text("travels")
    async with server(root, other) as s:
        await s.ok("move_file", source=str(root / "a.txt"), destination=str(other / "a.txt"))
    assert (other / "a.txt").read_text() == "travels"
    assert not (root / "a.txt").exists()


async def test_moves_across_devices_by_copy_then_delete(server, root, tmp_path, monkeypatch, tree_of):
    other = tmp_path / "other"
    other.mkdir()
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("f")
    (root / "d" / "l").symlink_to("f.txt")
    before = tree_of(root / "d")
    real_rename = os.rename
    refused = []

    def cross_device(src, dst, *args, **kwargs):
        # The host renames by name relative to directory descriptors.
        if os.fspath(src) == "d" and os.fspath(dst) == "d":
            refused.append(src)
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(src, dst, *args, **kwargs)

    async with server(root, other) as s:
        monkeypatch.setattr(fsmcp.paths.fs.os, "rename", cross_device)
        await s.ok("move_file", source=str(root / "d"), destination=str(other / "d"))
        monkeypatch.undo()
    assert refused, "the move never tried the plain rename that fails across devices"
    assert tree_of(other / "d") == before
    assert not (root / "d").exists()


async def test_a_link_moves_as_a_link(server, root):
    (root / "target.txt").write_text("t")
    (root / "link").symlink_to("target.txt")
    async with server() as s:
        text = await s.ok("move_file", source="link", destination="link2")
    assert os.readlink(root / "link2") == "target.txt"
    assert not (root / "link").is_symlink()
    assert (root / "target.txt").read_text() == "t"
    assert text.startswith("Successfully moved link ")


async def test_an_existing_destination_keeps_both(server, root):
    (root / "a.txt").write_text("a")
    (root / "b.txt").write_text("b")
    async with server() as s:
        await s.fail("move_file", "ALREADY_EXISTS", source="a.txt", destination="b.txt")
    assert (root / "a.txt").read_text() == "a"
    assert (root / "b.txt").read_text() == "b"


async def test_overwrite_replaces_the_destination(server, root):
    (root / "a.txt").write_text("a")
    (root / "b.txt").write_text("b")
    async with server() as s:
        text = await s.ok("move_file", source="a.txt", destination="b.txt", overwrite=True)
    assert (root / "b.txt").read_text() == "a"
    assert not (root / "a.txt").exists()
    assert text.endswith("(replaced the existing file)")


async def test_a_file_onto_a_directory_names_the_path_inside(server, root):
    (root / "a.txt").write_text("a")
    (root / "dir").mkdir()
    async with server() as s:
        text = await s.fail("move_file", "ALREADY_EXISTS", source="a.txt", destination="dir")
    assert str(root / "dir" / "a.txt") in text
    assert (root / "a.txt").exists()


async def test_a_non_empty_directory_destination_is_not_replaced(server, root, tree_of):
    (root / "src").mkdir()
    (root / "src" / "s.txt").write_text("s")
    (root / "dst").mkdir()
    (root / "dst" / "d.txt").write_text("d")
    before = tree_of(root)
    async with server() as s:
        text = await s.fail("move_file", "DIRECTORY_NOT_EMPTY", source="src", destination="dst", overwrite=True)
    assert "delete_file" in text and "was not moved" in text
    assert tree_of(root) == before


async def test_a_missing_source_is_not_found(server, root):
    async with server() as s:
        await s.fail("move_file", "NOT_FOUND", source="ghost", destination="b")


async def test_the_same_path_changes_nothing(server, root):
    (root / "a.txt").write_text("a")
    async with server() as s:
        text = await s.ok("move_file", source="a.txt", destination=str(root / "a.txt"))
    assert "nothing changed" in text
    assert (root / "a.txt").read_text() == "a"


async def test_move_into_itself_is_refused(server, root, tree_of):
    (root / "d" / "sub").mkdir(parents=True)
    before = tree_of(root)
    async with server() as s:
        await s.fail("move_file", "INVALID_PARAMS", source="d", destination="d/sub/d")
    assert tree_of(root) == before


async def test_a_trailing_slash_on_a_new_destination_is_refused(server, root):
    (root / "a.txt").write_text("a")
    (root / "d").mkdir()
    async with server() as s:
        await s.fail("move_file", "INVALID_PARAMS", source="a.txt", destination="newdir/")
        await s.ok("move_file", source="d", destination="e/")
    assert (root / "a.txt").read_text() == "a"
    assert (root / "e").is_dir()


async def test_a_file_in_the_destination_chain_is_not_a_directory(server, root):
    (root / "a.txt").write_text("a")
    (root / "f.txt").write_text("f")
    async with server() as s:
        await s.fail("move_file", "NOT_DIRECTORY", source="a.txt", destination="f.txt/b.txt")
    assert (root / "a.txt").read_text() == "a"
