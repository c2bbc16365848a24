"""A path longer than PATH_MAX is refused by every tool, as a name longer than NAME_MAX is."""

from __future__ import annotations

import pytest

from fsmcp.testing import ToolCalls, serve_stdio

pytestmark = pytest.mark.anyio

LONG = "/".join(["d" * 200] * 25)  # 5,024 characters, every component a legal name


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": LONG, "content": "x"}),
        ("create_directory", {"path": LONG}),
        ("copy_file", {"source": "a.txt", "destination": LONG}),
        ("move_file", {"source": "a.txt", "destination": LONG}),
        ("read_file", {"path": LONG}),
        ("get_file_info", {"path": LONG}),
        ("list_directory", {"path": LONG}),
        ("edit_file", {"path": LONG, "edits": [{"oldText": "a", "newText": "b"}]}),
        ("grep_files", {"regex": "a", "directory": LONG}),
        ("glob_search", {"directory": LONG, "globs": ["*"]}),
    ],
)
async def test_a_path_past_path_max_is_invalid_params(tmp_path, tool, args):
    root = tmp_path.resolve()
    (root / "a.txt").write_text("a\n")
    async with serve_stdio(str(root)) as client:
        text = await ToolCalls(client).fail(tool, "INVALID_PARAMS", **args)
    assert "past the system's limit of 4,095 (PATH_MAX); use a shorter path" in text
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]


WIDE = "/".join(["€" * 80] * 18)  # 1,457 characters but 4,337 bytes: the limit counts bytes


@pytest.mark.parametrize("tool", ["write_file", "get_file_info"])
async def test_the_limit_counts_a_paths_bytes_not_its_characters(tmp_path, tool):
    root = tmp_path.resolve()
    async with serve_stdio(str(root)) as client:
        text = await ToolCalls(client).fail(tool, "INVALID_PARAMS", path=WIDE, **({"content": "x"} if tool == "write_file" else {}))
    assert f"is {len(str(root).encode()) + 1 + len(WIDE.encode()):,} bytes long, past the system's limit of 4,095" in text
    assert list(root.iterdir()) == []
