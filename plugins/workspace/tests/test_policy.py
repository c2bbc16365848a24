"""The workspace-relative policy (--policy workspace), through the table of calls in docs/tools/workspace.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from fsmcp import ErrorCode, ToolError
from fsmcp_workspace.policy import relative

pytestmark = pytest.mark.anyio


@pytest.fixture
def workspace(root):
    """The files the table's calls name, in the workspace (the first root)."""
    (root / "a.txt").write_text("old\n")
    (root / "b.txt").write_text("b\n")
    (root / "tmp").mkdir()
    (root / "tmp" / "a.txt").write_text("tmp a\n")
    (root / "tmp" / "keep.txt").write_text("keep\n")
    (root / "big.txt").write_text("x" * 100)
    return root


# -- the table's calls, one test per row, with the other servers' names as written -------------


async def test_table_list_dir(server, workspace):
    async with server(policy="workspace") as s:
        listing = await s.ok("list_directory", dir=".", recursive=False)
        assert "[FILE] a.txt" in listing and "[DIR] tmp" in listing
        await s.fail("list_directory", "ACCESS_DENIED", dir="../")
        assert await s.ok("list_directory", dir="workspace/workspace") == listing


async def test_table_read_file(server, workspace):
    (workspace / "notes.txt").write_text("my notes\n")
    async with server(policy="workspace") as s:
        assert await s.ok("read_file", file="notes.txt") == "my notes\n"
        text = await s.fail("read_file", "ACCESS_DENIED", file="/etc/passwd")
        assert "root:" not in text
        await s.fail("read_file", "FILE_TOO_LARGE", file="big.txt", maxBytes=16)


async def test_table_write_file(server, workspace):
    async with server(policy="workspace") as s:
        await s.ok("write_file", file="src/index.html", content="<h1>Hi</h1>")
        await s.fail("write_file", "ACCESS_DENIED", file="../x.txt", content="x")
    assert (workspace / "src" / "index.html").read_text() == "<h1>Hi</h1>"
    assert not (workspace.parent / "x.txt").exists()


async def test_table_delete_file(server, workspace, tmp_path):
    (tmp_path / "secret").write_text("SECRET")
    async with server(policy="workspace") as s:
        await s.ok("delete_file", path="tmp/a.txt")
        await s.fail("delete_file", "DIRECTORY_NOT_EMPTY", path="tmp", recursive=False)
        await s.fail("delete_file", "ACCESS_DENIED", path="workspace/../secret")
    assert not (workspace / "tmp" / "a.txt").exists()
    assert (workspace / "tmp" / "keep.txt").exists() and (tmp_path / "secret").exists()


async def test_table_move_file(server, workspace, tmp_path):
    (tmp_path / "a").write_text("outside")
    async with server(policy="workspace") as s:
        await s.ok("move_file", **{"from": "a.txt", "to": "archive/a.txt"})
        (workspace / "a.txt").write_text("again\n")
        await s.fail("move_file", "ALREADY_EXISTS", **{"from": "a.txt", "to": "b.txt", "overwrite": False})
        await s.fail("move_file", "ACCESS_DENIED", **{"from": "/tmp/a", "to": "x"})
    assert (workspace / "archive" / "a.txt").read_text() == "old\n"
    assert (workspace / "b.txt").read_text() == "b\n" and not (workspace / "x").exists()


async def test_table_mkdir(server, workspace):
    async with server(policy="workspace") as s:
        await s.ok("create_directory", dir="src/components")
        await s.fail("create_directory", "ACCESS_DENIED", dir="../outside")
    assert (workspace / "src" / "components").is_dir()
    assert not (workspace.parent / "outside").exists()


async def test_table_mkdir_with_recursive_as_written(server, workspace):
    async with server(policy="workspace") as s:
        await s.ok("create_directory", dir="src/components", recursive=True)
        await s.fail("create_directory", "NOT_FOUND", dir="lib/deeper/still", recursive=False)
    assert (workspace / "src" / "components").is_dir()
    assert not (workspace / "lib").exists()


# -- the policy's rules ----------------------------------------------------------------------------


WS = Path("/srv/ws")


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("a.txt", "a.txt"),
        ("workspace/workspace/a.txt", "a.txt"),
        ("workspace", "."),
        ("workspace/", "."),
        ("./workspace/src//app.py", "src/app.py"),
        ("src/", "src/"),
        ("src/workspace/a.txt", "src/workspace/a.txt"),
        (".", "."),
        ("/srv/ws/a.txt", "/srv/ws/a.txt"),
        ("/srv/ws", "/srv/ws"),
    ],
)
def test_relative_forms(raw, expected):
    assert relative(raw, WS) == expected


@pytest.mark.parametrize(
    "raw", ["/etc/passwd", "/srv/ws-evil/a.txt", "/srv", "~/x", "..", "../x", "a/../b", "workspace/..", "a/b/..", "/srv/ws/../x"]
)
def test_absolute_elsewhere_and_dot_dot_are_refused(raw):
    with pytest.raises(ToolError) as info:
        relative(raw, WS)
    assert info.value.code is ErrorCode.ACCESS_DENIED


async def test_absolute_paths_outside_the_workspace_are_refused_even_inside_the_roots(server, workspace):
    async with server(policy="workspace") as s:
        await s.ok("set_workspace", path="project")
        text = await s.fail("read_file", "ACCESS_DENIED", path=str(workspace / "top.txt"))
        assert "relative to the workspace" in text
        assert await s.ok("read_file", path=str(workspace / "project" / "notes.txt")) == "project notes\n"


async def test_a_link_out_of_the_workspace_is_refused_even_inside_the_roots(server, workspace):
    (workspace / "project" / "link_up").symlink_to(workspace)
    async with server(policy="workspace") as s:
        await s.ok("set_workspace", path="project")
        assert await s.ok("read_file", path="notes.txt") == "project notes\n"
        text = await s.fail("read_file", "ACCESS_DENIED", path="link_up/top.txt")
        assert "outside the workspace" in text
        await s.fail("read_file", "ACCESS_DENIED", path="../top.txt")


async def test_the_workspace_itself_is_never_deleted(server, workspace):
    async with server(policy="workspace") as s:
        await s.ok("set_workspace", path="project")
        for raw in (".", "workspace"):
            await s.fail("delete_file", "ACCESS_DENIED", path=raw, recursive=True)
    assert (workspace / "project" / "notes.txt").exists()


async def test_read_only_roots_and_require_workspace_still_apply(server, workspace):
    async with server(f"{workspace}:ro", policy="workspace", require_workspace=True) as s:
        text = await s.fail("read_file", "ACCESS_DENIED", path="a.txt")
        assert "set_workspace" in text
        await s.ok("set_workspace", path=str(workspace))
        assert await s.ok("read_file", path="a.txt") == "old\n"
        await s.fail("write_file", "READ_ONLY", path="a.txt", content="new")
    assert (workspace / "a.txt").read_text() == "old\n"
