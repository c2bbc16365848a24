"""Every write tool stays inside the roots: links out, `..`, sibling prefixes, NUL, roots themselves."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.anyio


@pytest.fixture
def links_out(root, outside):
    (root / "inside.txt").write_text("inside")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "ghost").symlink_to(outside / "ghost.txt")
    return root


@pytest.fixture
def untouched(outside, tree_of, secret):
    """Call with a session at the end: the outside tree is as made, and no output shows it."""
    before = tree_of(outside)

    def check(session):
        assert tree_of(outside) == before
        assert (outside / "secret.txt").read_text() == secret
        for text in session.texts:
            assert secret not in text
            assert str(outside) not in text

    return check


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": "link.txt", "content": "pwned"}),
        ("write_file", {"path": "linkdir/secret.txt", "content": "pwned"}),
        ("write_file", {"path": "linkdir/new.txt", "content": "pwned"}),
        ("write_file", {"path": "ghost", "content": "pwned"}),
        ("append_file", {"path": "link.txt", "content": "pwned"}),
        ("append_file", {"path": "linkdir/new.txt", "content": "pwned", "create": True}),
        ("create_directory", {"path": "linkdir/newdir"}),
        ("create_directory", {"path": "ghost"}),
        ("copy_file", {"source": "linkdir/secret.txt", "destination": "stolen.txt"}),
        ("copy_file", {"source": "inside.txt", "destination": "linkdir/planted.txt"}),
        ("move_file", {"source": "inside.txt", "destination": "linkdir/planted.txt"}),
        ("move_file", {"source": "linkdir/secret.txt", "destination": "stolen.txt"}),
        ("delete_file", {"path": "linkdir/secret.txt"}),
    ],
)
async def test_links_out_of_the_root_are_refused(server, links_out, untouched, tree_of, tool, args):
    before = tree_of(links_out)
    async with server() as s:
        await s.fail(tool, "ACCESS_DENIED", **args)
    assert tree_of(links_out) == before
    untouched(s)


async def test_a_link_out_is_copied_moved_and_deleted_as_a_link(server, links_out, outside, untouched):
    async with server() as s:
        await s.ok("copy_file", source="link.txt", destination="copy-of-link")
        await s.ok("copy_file", source="linkdir", destination="copy-of-linkdir")
        await s.ok("move_file", source="link.txt", destination="moved/link.txt")
        await s.ok("delete_file", path="copy-of-link")
        await s.ok("delete_file", path="linkdir", recursive=True)
        await s.ok("delete_file", path="ghost")
    assert os.readlink(links_out / "copy-of-linkdir") == str(outside)
    assert os.readlink(links_out / "moved" / "link.txt") == str(outside / "secret.txt")
    assert not os.path.lexists(links_out / "copy-of-link")
    assert not os.path.lexists(links_out / "linkdir")
    untouched(s)


async def test_a_tree_holding_a_link_out_is_copied_with_the_link(server, root, outside, untouched):
    (root / "tree").mkdir()
    (root / "tree" / "escape").symlink_to(outside)
    async with server() as s:
        await s.ok("copy_file", source="tree", destination="tree2")
        await s.ok("delete_file", path="tree", recursive=True)
    assert os.readlink(root / "tree2" / "escape") == str(outside)
    untouched(s)


@pytest.mark.parametrize("raw", ["../outside/new.txt", "sub/../../outside/new.txt", "{root}/../outside/new.txt"])
async def test_dot_dot_out_of_the_root_is_refused(server, root, untouched, raw):
    path = raw.format(root=root)
    async with server() as s:
        await s.fail("write_file", "ACCESS_DENIED", path=path, content="x")
        await s.fail("create_directory", "ACCESS_DENIED", path=path)
        await s.fail("delete_file", "ACCESS_DENIED", path=path.replace("new.txt", "secret.txt"))
    untouched(s)


async def test_a_sibling_with_the_root_as_prefix_is_outside(server, root, tmp_path):
    evil = tmp_path / "root-evil"
    evil.mkdir()
    (evil / "victim.txt").write_text("victim")
    async with server() as s:
        await s.fail("write_file", "ACCESS_DENIED", path=str(evil / "new.txt"), content="x")
        await s.fail("delete_file", "ACCESS_DENIED", path=str(evil / "victim.txt"))
        await s.fail("move_file", "ACCESS_DENIED", source=str(evil / "victim.txt"), destination="got.txt")
        await s.fail("copy_file", "ACCESS_DENIED", source=str(evil / "victim.txt"), destination="got.txt")
    assert sorted(p.name for p in evil.iterdir()) == ["victim.txt"]
    assert not (root / "got.txt").exists()


async def test_a_nul_byte_is_refused(server, root):
    async with server() as s:
        await s.fail("write_file", "ACCESS_DENIED", path="a\x00b.txt", content="x")
        await s.fail("create_directory", "ACCESS_DENIED", path="d\x00")
        await s.fail("delete_file", "ACCESS_DENIED", path="\x00")
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("raw", [".", "{root}", "{root}/", "sub/..", "./"])
async def test_a_root_is_never_deleted(server, root, raw):
    (root / "sub").mkdir()
    (root / "keep.txt").write_text("keep")
    async with server() as s:
        text = await s.fail("delete_file", "ACCESS_DENIED", path=raw.format(root=root), recursive=True)
    assert "root" in text
    assert (root / "keep.txt").read_text() == "keep"


async def test_a_root_is_never_moved(server, root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (root / "keep.txt").write_text("keep")
    async with server(root, other) as s:
        await s.fail("move_file", "ACCESS_DENIED", source=str(root), destination=str(other / "moved"))
        await s.fail("move_file", "ACCESS_DENIED", source=str(other), destination=str(root / "moved"))
    assert (root / "keep.txt").read_text() == "keep"
    assert sorted(p.name for p in other.iterdir()) == []


async def test_a_directory_holding_a_root_is_never_deleted_or_moved(server, root):
    inner = root / "sub" / "inner"
    inner.mkdir(parents=True)
    (inner / "keep.txt").write_text("keep")
    async with server(root, inner) as s:
        await s.fail("delete_file", "ACCESS_DENIED", path="sub", recursive=True)
        await s.fail("move_file", "ACCESS_DENIED", source="sub", destination="elsewhere")
        await s.fail("delete_file", "ACCESS_DENIED", path=str(inner), recursive=True)
    assert (inner / "keep.txt").read_text() == "keep"
    assert not (root / "elsewhere").exists()


async def test_overwriting_a_link_out_replaces_the_link_not_its_target(server, links_out, untouched):
    (links_out / "other.txt").write_text("other")
    async with server() as s:
        await s.ok("copy_file", source="inside.txt", destination="link.txt", overwrite=True)
        await s.ok("move_file", source="other.txt", destination="ghost", overwrite=True)
    assert not (links_out / "link.txt").is_symlink()
    assert (links_out / "link.txt").read_text() == "inside"
    assert (links_out / "ghost").read_text() == "other"
    untouched(s)


async def test_a_root_is_never_replaced(server, root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("keep")
    (root / "d").mkdir()
    async with server(root, other) as s:
        await s.fail("copy_file", "ACCESS_DENIED", source="d", destination=str(other), overwrite=True)
        await s.fail("move_file", "ACCESS_DENIED", source="d", destination=str(other), overwrite=True)
    assert (other / "keep.txt").read_text() == "keep"
    assert (root / "d").is_dir()
