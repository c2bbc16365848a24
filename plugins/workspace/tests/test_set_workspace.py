"""set_workspace: inside the roots, relative paths follow it, one client's choice is its own."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_sets_the_workspace_and_relative_paths_follow(server, root):
    async with server() as s:
        text = await s.ok("set_workspace", path=str(root / "project"))
        assert text == f"Successfully set workspace root to: {root / 'project'}"
        assert await s.ok("read_file", path="notes.txt") == "project notes\n"
        await s.ok("write_file", path="src/new.py", content="x = 1\n")
    assert (root / "project" / "src" / "new.py").read_text() == "x = 1\n"


async def test_a_relative_workspace_resolves_against_the_current_one(server, root):
    async with server() as s:
        await s.ok("set_workspace", path="project")
        assert await s.ok("set_workspace", path="src") == f"Successfully set workspace root to: {root / 'project' / 'src'}"
        assert await s.ok("set_workspace", path="../..") == f"Successfully set workspace root to: {root}"
        assert await s.ok("read_file", path="top.txt") == "top\n"


@pytest.mark.parametrize(
    "where, code",
    [("../..", "ACCESS_DENIED"), ("/etc", "ACCESS_DENIED"), ("missing", "NOT_FOUND"), ("notes.txt", "NOT_DIRECTORY"), ("", "INVALID_PARAMS")],
)
async def test_refused_workspaces_leave_the_old_one(server, root, where, code):
    async with server() as s:
        await s.ok("set_workspace", path="project")
        await s.fail("set_workspace", code, path=where)
        assert await s.ok("read_file", path="notes.txt") == "project notes\n"


async def test_a_link_out_of_the_roots_is_not_a_workspace(server, root, tmp_path):
    (root / "out").symlink_to(tmp_path)
    async with server() as s:
        text = await s.fail("set_workspace", "ACCESS_DENIED", path="out")
    assert "SECRET" not in text


async def test_a_workspace_in_a_read_only_root_stays_read_only(server, root):
    async with server(f"{root}:ro") as s:
        await s.ok("set_workspace", path="project")
        assert await s.ok("read_file", path="notes.txt") == "project notes\n"
        await s.fail("write_file", "READ_ONLY", path="notes.txt", content="changed")
    assert (root / "project" / "notes.txt").read_text() == "project notes\n"


async def test_under_read_only_set_workspace_stays_offered(server, root):
    # It changes no file, so --read-only (which drops every tool that only changes) keeps it.
    async with server(read_only=True, require_workspace=True) as s:
        offered = {t.name: t for t in (await s.client.list_tools()).tools}
        assert offered["set_workspace"].annotations.read_only_hint
        await s.ok("set_workspace", path="project")
        assert await s.ok("read_file", path="notes.txt") == "project notes\n"


async def test_absolute_paths_elsewhere_in_the_roots_still_work(server, root):
    async with server() as s:
        await s.ok("set_workspace", path="project")
        assert await s.ok("read_file", path=str(root / "top.txt")) == "top\n"


async def test_each_connection_starts_at_the_first_root(make_host, session):
    host = make_host()
    async with session(host) as first:
        await first.ok("set_workspace", path="project")
        async with session(host) as second:
            assert await second.ok("read_file", path="top.txt") == "top\n"
        assert await first.ok("read_file", path="notes.txt") == "project notes\n"


async def test_annotations(server):
    async with server() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    hints = tools["set_workspace"].annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (False, False, True, False)
    assert tools["set_workspace"].input_schema["required"] == ["path"]
