"""write_file's lineCount and write_files' all or nothing, over stdio."""

from __future__ import annotations

import pytest

from fsmcp.testing import ToolCalls, serve_stdio, tree_of

pytestmark = pytest.mark.anyio


async def test_line_count_refuses_content_cut_short(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        text = await s.fail("write_file", "INVALID_PARAMS", path=str(path), content="one\ntwo\n", lineCount=3)
        assert "holds 2 line(s), not the lineCount 3" in text
        assert path.read_text() == "old\n"
        for content, lines in [("a\nb", 2), ("a\nb\n", 2), ("", 0), ("\n", 1), ("a\r\nb\r\n", 2)]:
            await s.ok("write_file", path=str(path), content=content, lineCount=lines)
            assert path.read_bytes() == content.encode()
        await s.ok("write_file", path=str(path), content="eA==", encoding="base64", lineCount=1)  # "x"


async def test_write_files_writes_every_file(tmp_path):
    (tmp_path / "a.txt").write_text("old a\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        result = await client.call_tool(
            "write_files",
            {"files": [{"path": str(tmp_path / "a.txt"), "content": "new a\n", "lineCount": 1}, {"path": str(tmp_path / "sub/b.txt"), "content": "b"}]},
        )
        assert not result.is_error
        assert [f["created"] for f in result.structured_content["files"]] == [False, True]
        assert (tmp_path / "a.txt").read_text() == "new a\n"
        assert (tmp_path / "sub/b.txt").read_text() == "b"
        await s.fail("write_files", "INVALID_PARAMS", files=[{"path": "x.txt", "content": "1"}, {"path": "x.txt", "content": "2"}])


@pytest.mark.parametrize(
    "last",
    [
        {"path": "d", "content": "d is a directory"},  # fails while writing, after the others were written
        {"path": "c.txt", "content": "one\ntwo", "lineCount": 1},  # fails before anything is written
        {"path": "c.txt", "content": "c", "expectedVersion": "0000000000000000"},
    ],
)
async def test_write_files_is_all_or_nothing(tmp_path, last):
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("old a\n")
    (root / "a.txt").chmod(0o640)
    (root / "d").mkdir()
    before = tree_of(root)
    async with serve_stdio(str(root), cwd=root) as client:
        s = ToolCalls(client)
        await s.call(
            "write_files",
            files=[{"path": "a.txt", "content": "new a\n"}, {"path": "new/deep/b.txt", "content": "b"}, last],
        )
        assert s.texts[-1].split(":")[0] in ("NOT_FILE", "INVALID_PARAMS", "EDIT_CONFLICT"), s.texts[-1]
    assert tree_of(root) == before


async def test_write_files_honours_the_stale_guard_for_every_file(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        await s.ok("read_multiple_files", paths=[str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])
        (tmp_path / "b.txt").write_text("b, changed outside\n")
        await s.fail("write_files", "EDIT_CONFLICT", files=[{"path": str(tmp_path / "a.txt"), "content": "A"}, {"path": str(tmp_path / "b.txt"), "content": "B"}])
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert (tmp_path / "b.txt").read_text() == "b, changed outside\n"
