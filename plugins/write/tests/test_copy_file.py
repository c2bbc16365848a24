"""copy_file: files, trees, links as links, overwrite rules and refusals."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.anyio


async def test_copies_a_file_and_creates_parents(server, root):
    (root / "a.txt").write_bytes(b"alpha\x00")
    (root / "a.txt").chmod(0o640)
    async with server() as s:
        text = await s.ok("copy_file", source="a.txt", destination="sub/dir/b.txt")
    copy = root / "sub" / "dir" / "b.txt"
    assert copy.read_bytes() == b"alpha\x00"
    assert copy.stat().st_mode & 0o777 == 0o640
    assert (root / "a.txt").read_bytes() == b"alpha\x00"
    assert text == f"Successfully copied file {root / 'a.txt'} to {copy}"


async def test_from_and_to_are_silent_aliases(server, root):
    (root / "a.txt").write_text("a")
    async with server() as s:
        await s.ok("copy_file", **{"from": "a.txt", "to": "b.txt"})
    assert (root / "b.txt").read_text() == "a"


async def test_copies_a_tree_with_links_as_links(server, root, tree_of):
    src = root / "src"
    (src / "deep").mkdir(parents=True)
    (src / "deep" / "f.txt").write_text("f")
    (src / "rel-link").symlink_to("deep/f.txt")
    async with server() as s:
        text = await s.ok("copy_file", source="src", destination="dst")
    assert tree_of(root / "dst") == tree_of(src)
    assert (root / "dst" / "rel-link").is_symlink()
    assert text == f"Successfully copied directory {src} to {root / 'dst'}"


async def test_a_link_is_copied_as_a_link(server, root):
    (root / "target.txt").write_text("t")
    (root / "link").symlink_to("target.txt")
    async with server() as s:
        text = await s.ok("copy_file", source="link", destination="link2")
    assert os.readlink(root / "link2") == "target.txt"
    assert text.startswith("Successfully copied link ")


async def test_an_existing_destination_is_already_exists(server, root):
    (root / "a.txt").write_text("new")
    (root / "b.txt").write_text("old")
    async with server() as s:
        text = await s.fail("copy_file", "ALREADY_EXISTS", source="a.txt", destination="b.txt")
    assert "overwrite: true" in text
    assert (root / "b.txt").read_text() == "old"


async def test_overwrite_replaces_a_file(server, root):
    (root / "a.txt").write_text("new")
    (root / "b.txt").write_text("old")
    async with server() as s:
        text = await s.ok("copy_file", source="a.txt", destination="b.txt", overwrite=True)
    assert (root / "b.txt").read_text() == "new"
    assert text.endswith("(replaced the existing file)")


async def test_overwrite_replaces_a_directory_with_a_directory(server, root, tree_of):
    (root / "src").mkdir()
    (root / "src" / "new.txt").write_text("new")
    (root / "dst").mkdir()
    (root / "dst" / "stale.txt").write_text("stale")
    async with server() as s:
        await s.ok("copy_file", source="src", destination="dst", overwrite=True)
    assert tree_of(root / "dst") == tree_of(root / "src")
    assert [p.name for p in root.iterdir() if "fsmcp-tmp" in p.name] == []


async def test_a_file_onto_a_directory_names_the_path_inside(server, root):
    (root / "a.txt").write_text("a")
    (root / "dir").mkdir()
    async with server() as s:
        text = await s.fail("copy_file", "ALREADY_EXISTS", source="a.txt", destination="dir", overwrite=True)
    assert str(root / "dir" / "a.txt") in text
    assert list((root / "dir").iterdir()) == []


async def test_a_directory_onto_a_file_is_refused(server, root):
    (root / "d").mkdir()
    (root / "f.txt").write_text("f")
    async with server() as s:
        text = await s.fail("copy_file", "ALREADY_EXISTS", source="d", destination="f.txt", overwrite=True)
    assert "delete it first" in text
    assert (root / "f.txt").read_text() == "f"


async def test_a_missing_source_is_not_found(server, root):
    async with server() as s:
        await s.fail("copy_file", "NOT_FOUND", source="ghost.txt", destination="b.txt")
    assert not (root / "b.txt").exists()


async def test_copy_into_itself_is_refused(server, root, tree_of):
    (root / "d" / "sub").mkdir(parents=True)
    before = tree_of(root)
    async with server() as s:
        await s.fail("copy_file", "INVALID_PARAMS", source="d", destination="d/sub/copy")
        await s.fail("copy_file", "INVALID_PARAMS", source="d", destination="d/sub")
        await s.fail("copy_file", "INVALID_PARAMS", source="d", destination="d")
    assert tree_of(root) == before


async def test_a_file_over_max_file_bytes_is_file_too_large(server, root):
    (root / "big.txt").write_text("x" * 20)
    async with server(root, max_file_bytes=10) as s:
        await s.fail("copy_file", "FILE_TOO_LARGE", source="big.txt", destination="copy.txt")
    assert not (root / "copy.txt").exists()


async def test_copies_out_of_a_read_only_root(server, root, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "src.txt").write_text("from ro")
    async with server(root, f"{ro}:ro") as s:
        await s.ok("copy_file", source=str(ro / "src.txt"), destination=str(root / "dst.txt"))
        await s.fail("copy_file", "READ_ONLY", source=str(root / "dst.txt"), destination=str(ro / "back.txt"))
    assert (root / "dst.txt").read_text() == "from ro"
    assert not (ro / "back.txt").exists()


async def test_a_trailing_slash_on_a_new_destination_is_refused(server, root):
    (root / "a.txt").write_text("a")
    async with server() as s:
        text = await s.fail("copy_file", "INVALID_PARAMS", source="a.txt", destination="newdir/")
    assert str(root / "newdir" / "a.txt") in text
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]


async def test_a_file_in_the_destination_chain_is_not_a_directory(server, root):
    (root / "a.txt").write_text("a")
    (root / "f.txt").write_text("f")
    async with server() as s:
        await s.fail("copy_file", "NOT_DIRECTORY", source="a.txt", destination="f.txt/b.txt")
    assert (root / "f.txt").read_text() == "f"
