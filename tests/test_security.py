"""Attacks on the path policy through the real server over stdio, against every read and write tool.

Every test also checks that the files outside the root are byte-for-byte unchanged and that
their content never appears in anything the server said.
"""

from pathlib import Path

import pytest

from fsmcp.testing import serve_stdio, text_of

SECRET = "TOP-SECRET-CONTENT"


def snapshot(top: Path) -> dict[str, bytes | str]:
    state: dict[str, bytes | str] = {}
    for p in sorted(top.rglob("*")):
        rel = str(p.relative_to(top))
        if p.is_symlink():
            state[rel] = "link:" + str(p.readlink())
        elif p.is_file():
            state[rel] = p.read_bytes()
        else:
            state[rel] = "dir"
    return state


@pytest.fixture
def world(tmp_path):
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "inside.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    evil = tmp_path / "root-evil"  # same prefix as the root
    evil.mkdir()
    (evil / "secret.txt").write_text(SECRET)
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "link_dir").symlink_to(outside)
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "keep.txt").write_text("keep")
    return tmp_path, root, outside, evil, ro


class Recorder:
    """Calls tools and keeps every text the server returned."""

    def __init__(self, client):
        self.client = client
        self.said: list[str] = []

    async def call(self, tool: str, **args):
        result = await self.client.call_tool(tool, args)
        self.said.append(text_of(result))
        return result

    async def refused(self, code: str, tool: str, **args) -> str:
        result = await self.call(tool, **args)
        text = text_of(result)
        assert result.is_error, f"{tool} {args} was not refused: {text[:200]}"
        assert text.startswith(code + ": "), f"{tool} {args}: expected {code}, got {text[:200]}"
        return text


async def check_untouched(rec: Recorder, before: dict, outside: Path, evil: Path, ro: Path):
    after = {**{f"outside/{k}": v for k, v in snapshot(outside).items()},
             **{f"evil/{k}": v for k, v in snapshot(evil).items()},
             **{f"ro/{k}": v for k, v in snapshot(ro).items()}}
    assert after == before
    for text in rec.said:
        assert SECRET not in text


def outside_state(outside, evil, ro):
    return {**{f"outside/{k}": v for k, v in snapshot(outside).items()},
            **{f"evil/{k}": v for k, v in snapshot(evil).items()},
            **{f"ro/{k}": v for k, v in snapshot(ro).items()}}


@pytest.mark.anyio
async def test_reads_cannot_leave_the_root(world):
    tmp, root, outside, evil, ro = world
    before = outside_state(outside, evil, ro)
    async with serve_stdio(str(root)) as client:
        rec = Recorder(client)
        for raw in ["../outside/secret.txt", str(outside / "secret.txt"), str(evil / "secret.txt"),
                    "docs/../../outside/secret.txt", "link_file", "link_dir/secret.txt", "docs/\x00x"]:
            await rec.refused("ACCESS_DENIED", "read_file", path=raw)
        multi = await rec.call("read_multiple_files", paths=["link_file", "docs/inside.txt", str(evil / "secret.txt")])
        assert not multi.is_error
        assert "inside" in text_of(multi) and text_of(multi).count("[error: ACCESS_DENIED") == 2
        for raw in ["link_dir", "..", str(evil), str(outside)]:
            await rec.refused("ACCESS_DENIED", "list_directory", path=raw)
            await rec.refused("ACCESS_DENIED", "directory_tree", path=raw)
        await rec.refused("ACCESS_DENIED", "get_file_info", path="link_dir/secret.txt")
        await rec.refused("ACCESS_DENIED", "get_file_info", path=str(evil / "secret.txt"))
        # Listings describe the links as links and say nothing of what lies outside.
        for tool, args in [("list_directory", {"path": "."}), ("list_directory", {"path": ".", "recursive": True, "sizes": True}),
                           ("directory_tree", {"path": "."}), ("get_file_info", {"path": "link_file"}),
                           ("get_file_info", {"path": "link_dir"})]:
            result = await rec.call(tool, **args)
            assert not result.is_error, text_of(result)
            assert str(outside) not in text_of(result)
            assert "secret.txt" not in text_of(result)
    await check_untouched(rec, before, outside, evil, ro)


@pytest.mark.anyio
async def test_writes_cannot_leave_the_root(world):
    tmp, root, outside, evil, ro = world
    before = outside_state(outside, evil, ro)
    async with serve_stdio(str(root), f"{ro}:ro") as client:
        rec = Recorder(client)
        for raw in ["link_file", "link_dir/new.txt", "../outside/new.txt", str(evil / "new.txt"), str(evil / "secret.txt"),
                    "link_dir/deeper/new.txt", "docs/\x00.txt"]:
            await rec.refused("ACCESS_DENIED", "write_file", path=raw, content="pwned")
        await rec.refused("ACCESS_DENIED", "append_file", path="link_file", content="pwned")
        await rec.refused("ACCESS_DENIED", "append_file", path=str(evil / "secret.txt"), content="pwned")
        await rec.refused("ACCESS_DENIED", "create_directory", path="link_dir/newdir")
        await rec.refused("ACCESS_DENIED", "create_directory", path=str(evil / "newdir"))
        await rec.refused("ACCESS_DENIED", "copy_file", source="link_dir/secret.txt", destination="docs/stolen.txt")
        await rec.refused("ACCESS_DENIED", "copy_file", source=str(evil / "secret.txt"), destination="docs/stolen.txt")
        await rec.refused("ACCESS_DENIED", "copy_file", source="docs/inside.txt", destination="link_dir/planted.txt")
        await rec.refused("ACCESS_DENIED", "move_file", source="docs/inside.txt", destination="link_dir/planted.txt")
        await rec.refused("ACCESS_DENIED", "move_file", source="docs/inside.txt", destination=str(evil / "planted.txt"))
        await rec.refused("ACCESS_DENIED", "move_file", source="link_dir/secret.txt", destination="docs/stolen.txt")
        await rec.refused("ACCESS_DENIED", "delete_file", path="link_dir/secret.txt")
        await rec.refused("ACCESS_DENIED", "delete_file", path=str(evil / "secret.txt"))
        await rec.refused("ACCESS_DENIED", "delete_file", path=".", recursive=True)
        await rec.refused("ACCESS_DENIED", "delete_file", path=str(root), recursive=True)
        # The source stays when the destination is refused.
        assert (root / "docs" / "inside.txt").read_text() == "inside\n"
        # A read-only root refuses every change.
        for tool, args in [("write_file", {"path": str(ro / "keep.txt"), "content": "x"}),
                           ("append_file", {"path": str(ro / "keep.txt"), "content": "x"}),
                           ("create_directory", {"path": str(ro / "d")}),
                           ("copy_file", {"source": "docs/inside.txt", "destination": str(ro / "c.txt")}),
                           ("move_file", {"source": "docs/inside.txt", "destination": str(ro / "m.txt")}),
                           ("move_file", {"source": str(ro / "keep.txt"), "destination": "docs/m.txt"}),
                           ("delete_file", {"path": str(ro / "keep.txt")})]:
            await rec.refused("READ_ONLY", tool, **args)
        assert (root / "docs" / "inside.txt").read_text() == "inside\n"
        assert not (root / "docs" / "m.txt").exists()
    await check_untouched(rec, before, outside, evil, ro)


@pytest.mark.anyio
async def test_links_are_moved_copied_and_deleted_as_links(world):
    tmp, root, outside, evil, ro = world
    before = outside_state(outside, evil, ro)
    async with serve_stdio(str(root)) as client:
        rec = Recorder(client)
        copied = await rec.call("copy_file", source="link_file", destination="docs/link_copy")
        assert not copied.is_error, text_of(copied)
        assert (root / "docs" / "link_copy").is_symlink()
        await rec.refused("ACCESS_DENIED", "read_file", path="docs/link_copy")
        moved = await rec.call("move_file", source="link_dir", destination="docs/moved_link")
        assert not moved.is_error, text_of(moved)
        assert (root / "docs" / "moved_link").is_symlink() and not (root / "link_dir").exists()
        for path in ["link_file", "docs/link_copy", "docs/moved_link"]:
            deleted = await rec.call("delete_file", path=path)
            assert not deleted.is_error, text_of(deleted)
            assert not (root / path).is_symlink()
    await check_untouched(rec, before, outside, evil, ro)


@pytest.mark.anyio
async def test_global_read_only_refuses_every_change(world):
    tmp, root, outside, evil, ro = world
    inside_before = snapshot(root)
    async with serve_stdio("--read-only", str(root)) as client:
        rec = Recorder(client)
        # A tool that can only change is not offered at all: the model is never told it may write.
        offered = {tool.name for tool in (await client.list_tools()).tools}
        assert not offered & {"write_file", "append_file", "create_directory", "copy_file", "move_file", "delete_file"}
        for tool, args in [("write_file", {"path": "docs/inside.txt", "content": "x"}),
                           ("write_file", {"path": "docs/new.txt", "content": "x"}),
                           ("append_file", {"path": "docs/inside.txt", "content": "x"}),
                           ("create_directory", {"path": "newdir"}),
                           ("copy_file", {"source": "docs/inside.txt", "destination": "docs/c.txt"}),
                           ("move_file", {"source": "docs/inside.txt", "destination": "docs/m.txt"}),
                           ("delete_file", {"path": "docs/inside.txt"})]:
            await rec.refused("INVALID_PARAMS", tool, **args)
        listing = await rec.call("list_allowed_directories")
        assert text_of(listing) == f"{root.resolve()} (read-only)"
        assert not (await rec.call("read_file", path="docs/inside.txt")).is_error
    assert snapshot(root) == inside_before
