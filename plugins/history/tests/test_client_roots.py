"""A client narrowed by its MCP roots sees nothing of the journal outside them: not a path, not a
name, in the text or in ``structuredContent``, even of a change that touched both sides."""

from __future__ import annotations

import json
from pathlib import Path

import fsmcp_history.hooks
import fsmcp_write.hooks
import pytest
from fsmcp.testing import connect, host_for, text_of
from mcp import types

PLUGINS = [("write", fsmcp_write.hooks), ("history", fsmcp_history.hooks)]
OUTSIDE_NAME = "payroll-2026.txt"


class Roots:
    def __init__(self, *uris: str):
        self.uris = list(uris)

    async def __call__(self, ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in self.uris])


def shown(result: types.CallToolResult) -> str:
    return text_of(result) + json.dumps(result.structured_content)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    base = tmp_path.resolve() / "srv"
    (base / "mine").mkdir(parents=True)
    (base / "theirs").mkdir()
    (base / "theirs" / OUTSIDE_NAME).write_text("before\n")
    return base


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_narrowed_client_sees_no_path_outside_its_roots_in_list_changes(tree, tmp_path, mode):
    host = host_for([tree], PLUGINS, journal=str(tmp_path / "journal"))
    async with connect(host, mode=mode) as wide:
        files = [{"path": "mine/a.txt", "content": "a\n"}, {"path": f"theirs/{OUTSIDE_NAME}", "content": "after\n"}]
        result = await wide.call_tool("write_files", {"files": files})
        assert not result.is_error, text_of(result)
        result = await wide.call_tool("list_changes", {})
        assert OUTSIDE_NAME in shown(result)  # the wide client sees both
    async with connect(host, list_roots_callback=Roots((tree / "mine").as_uri()), mode=mode) as narrow:
        for arguments in ({}, {"path": "a.txt"}):
            result = await narrow.call_tool("list_changes", arguments)
            assert not result.is_error, text_of(result)
            assert "a.txt" in text_of(result)  # the change is listed, with what it did inside
            assert OUTSIDE_NAME not in shown(result) and "theirs" not in shown(result), shown(result)
        # Nor does an undo tell (or restore) what lies outside.
        result = await narrow.call_tool("undo_change", {"id": 1})
        assert OUTSIDE_NAME not in shown(result) and "theirs" not in shown(result), shown(result)
    assert (tree / "theirs" / OUTSIDE_NAME).read_text() == "after\n"
