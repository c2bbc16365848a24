"""Every write tool refuses with READ_ONLY under a `:ro` root or --read-only, and nothing changes."""

from __future__ import annotations

import pytest
from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

CALLS = [
    ("write_file", {"path": "a.txt", "content": "changed"}),
    ("write_file", {"path": "new/b.txt", "content": "new"}),
    ("append_file", {"path": "a.txt", "content": "more"}),
    ("append_file", {"path": "c.txt", "content": "new", "create": True}),
    ("create_directory", {"path": "d/e"}),
    ("copy_file", {"source": "a.txt", "destination": "copy.txt"}),
    ("move_file", {"source": "a.txt", "destination": "moved.txt"}),
    ("delete_file", {"path": "a.txt"}),
    ("delete_file", {"path": "dir", "recursive": True}),
]


@pytest.fixture
def filled(root):
    (root / "a.txt").write_text("original")
    (root / "dir").mkdir()
    (root / "dir" / "f.txt").write_text("f")
    return root


@pytest.mark.parametrize(("tool", "args"), CALLS)
@pytest.mark.parametrize("how", ["ro-root", "--read-only"])
async def test_every_change_is_refused(server, filled, tree_of, how, tool, args):
    before = tree_of(filled)
    opened = server(f"{filled}:ro") if how == "ro-root" else server(filled, read_only=True)
    async with opened as s:
        # Under --read-only a tool that can only change is not offered; under a :ro root it refuses.
        text = await s.fail(tool, "READ_ONLY" if how == "ro-root" else "INVALID_PARAMS", **args)
    assert ("read-only root" if how == "ro-root" else f"unknown tool {tool!r}") in text
    assert tree_of(filled) == before


async def test_a_move_into_a_read_only_root_keeps_the_source(server, root, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    (root / "a.txt").write_text("stays")
    async with server(root, f"{ro}:ro") as s:
        await s.fail("move_file", "READ_ONLY", source="a.txt", destination=str(ro / "a.txt"))
        await s.fail("move_file", "READ_ONLY", source=str(ro), destination="taken")
    assert (root / "a.txt").read_text() == "stays"
    assert list(ro.iterdir()) == []


async def test_the_real_server_honours_read_only_flag_and_ro_roots(root, tmp_path, tree_of):
    ro = tmp_path / "ro"
    ro.mkdir()
    (root / "a.txt").write_text("original")
    before = tree_of(tmp_path)
    async with serve_stdio(str(root), "--read-only", "--enable", "write") as client:
        assert not (await client.list_tools()).tools
        result = await client.call_tool("write_file", {"path": "a.txt", "content": "changed"})
        assert result.is_error and text_of(result).startswith("INVALID_PARAMS: unknown tool 'write_file'")
    async with serve_stdio(str(root), f"{ro}:ro", "--enable", "write") as client:
        result = await client.call_tool("create_directory", {"path": str(ro / "sub")})
        assert result.is_error and text_of(result).startswith("READ_ONLY: ")
        result = await client.call_tool("write_file", {"path": "b.txt", "content": "ok"})
        assert not result.is_error, text_of(result)
    assert (root / "b.txt").read_text() == "ok"
    after = tree_of(tmp_path)
    del after["root/b.txt"]
    assert after == before
