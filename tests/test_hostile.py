"""Hostile inputs, sent as a hostile client or left by a hostile neighbour inside a root, through
the real server over stdio: none may freeze, crash or forge the server's answers."""

from __future__ import annotations

import pytest

from fsmcp.testing import ToolCalls, serve_stdio

pytestmark = pytest.mark.anyio


async def test_a_240_byte_name_is_written_edited_and_copied(tmp_path):
    # The longest names (up to 255 bytes) must work: the temporary file beside each is shortened.
    long = "n" * 236 + ".txt"
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        await s.ok("write_file", path=long, content="one\n")
        await s.ok("edit_file", path=long, edits=[{"oldText": "one", "newText": "two"}])
        await s.ok("copy_file", source=long, destination="c" + long[1:])
        await s.ok("write_file", path="é" * 127 + "x", content="two-byte letters\n")
    assert (tmp_path / long).read_text() == "two\n"
    assert (tmp_path / ("c" + long[1:])).read_text() == "two\n"
    assert (tmp_path / ("é" * 127 + "x")).read_text() == "two-byte letters\n"
    assert not [p.name for p in tmp_path.iterdir() if "fsmcp-tmp" in p.name]


async def test_a_transactional_batch_that_rolled_back_is_an_error_with_its_report(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    ops = [
        {"tool": "write_file", "arguments": {"path": "new.txt", "content": "x"}},
        {"tool": "write_file", "arguments": {"path": "a.txt", "content": "changed"}},
        {"tool": "delete_file", "arguments": {"path": "missing.txt"}},
    ]
    async with serve_stdio(str(tmp_path)) as client:
        text = await ToolCalls(client).fail("batch_operations", "NOT_FOUND", operations=ops, transactional=True)
    assert text.startswith("NOT_FOUND: Batch stopped at operation 3 (delete_file): 3 operations, 2 ok, 1 failed, 0 skipped. Rolled back:")
    assert "[1] write_file OK" in text and "[3] delete_file ERROR NOT_FOUND: " in text
    assert not (tmp_path / "new.txt").exists() and (tmp_path / "a.txt").read_text() == "a\n"


async def test_a_glob_of_2_to_the_18_brace_expansions_is_invalid_params_saying_the_limit(tmp_path):
    explosion = "{a,b}" * 18
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        for tool, args in [
            ("glob_search", {"directory": ".", "globs": [explosion]}),
            ("grep_files", {"directory": ".", "regex": "x", "globs": [explosion]}),
            ("search_files", {"directory": ".", "nameContains": "x", "excludeGlobs": [explosion]}),
            ("list_directory", {"path": ".", "excludeGlobs": [explosion]}),
            ("directory_tree", {"path": ".", "excludeGlobs": [explosion]}),
            ("edit_files", {"paths": [explosion], "edits": [{"oldText": "a", "newText": "b"}]}),
        ]:
            text = await s.fail(tool, "INVALID_PARAMS", **args)
            assert "more than 1,000 patterns" in text, (tool, text)
