"""--require-workspace: every path is refused until set_workspace is called; set_workspace still works."""

from __future__ import annotations

import pytest
from fsmcp.cli.commands import main
from fsmcp.api.config import ConfigError, build_settings, load_toml
from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio


async def test_file_tools_refuse_until_set_workspace(server, root):
    async with server(require_workspace=True) as s:
        for name, args in [
            ("read_file", {"path": "top.txt"}),
            ("read_file", {"path": str(root / "top.txt")}),
            ("list_directory", {}),
            ("write_file", {"path": "new.txt", "content": "x"}),
            ("delete_file", {"path": "top.txt"}),
        ]:
            text = await s.fail(name, "ACCESS_DENIED", **args)
            assert "call set_workspace first" in text and str(root) in text
        # The roots stay visible, so the model can choose a workspace inside them.
        assert await s.ok("list_allowed_directories") == f"{root} (read-write)"
        await s.ok("set_workspace", path=str(root / "project"))
        assert await s.ok("read_file", path="notes.txt") == "project notes\n"
        assert await s.ok("read_file", path=str(root / "top.txt")) == "top\n"
    assert (root / "top.txt").exists() and not (root / "new.txt").exists()


async def test_each_connection_must_set_its_own(make_host, session):
    host = make_host(require_workspace=True)
    async with session(host) as first:
        await first.ok("set_workspace", path="project")
        async with session(host) as second:
            await second.fail("read_file", "ACCESS_DENIED", path="top.txt")


async def test_the_flag_over_stdio(root):
    async with serve_stdio(str(root), "--require-workspace", "--enable", "read,workspace") as client:
        refused = await client.call_tool("read_file", {"path": "top.txt"})
        assert refused.is_error and "call set_workspace first" in text_of(refused)
        assert not (await client.call_tool("set_workspace", {"path": "project"})).is_error
        assert text_of(await client.call_tool("read_file", {"path": "notes.txt"})) == "project notes\n"


def test_serve_refuses_to_start_without_set_workspace(root, capsys):
    assert main(["serve", str(root), "--require-workspace", "--disable", "workspace"]) == 2
    assert "set_workspace" in capsys.readouterr().err


def test_the_setting_in_fsmcp_toml(tmp_path):
    (tmp_path / "fsmcp.toml").write_text("require-workspace = true\n")
    assert build_settings(load_toml(tmp_path / "fsmcp.toml"), {}).require_workspace is True
    with pytest.raises(ConfigError, match="require_workspace"):
        build_settings({"require_workspace": "yes"}, {})
