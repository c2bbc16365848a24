"""The stale-write guard, expectedVersion and one change at a time per file, over stdio."""

from __future__ import annotations

import zipfile

import anyio
import pytest

from fsmcp.testing import ToolCalls, serve_stdio

pytestmark = pytest.mark.anyio


def _version(text: str) -> str:
    return dict(line.split(": ", 1) for line in text.splitlines())["version"]


async def test_an_edit_over_a_change_made_outside_since_the_read_is_refused_until_read_again(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("one\ntwo\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        await s.ok("read_file", path=str(path))
        path.write_text("one\ntwo\nthird line, from elsewhere\n")
        for tool, args in [
            ("edit_file", {"edits": [{"oldText": "two", "newText": "2"}]}),
            ("write_file", {"content": "mine\n"}),
            ("append_file", {"content": "more"}),
            ("patch_apply", {"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n two\n"}),
        ]:
            text = await s.fail(tool, "EDIT_CONFLICT", path=str(path), **args)
            assert "changed on disk at" in text and "read it again" in text.lower(), text
        assert path.read_text() == "one\ntwo\nthird line, from elsewhere\n"
        await s.ok("read_file", path=str(path))
        await s.ok("edit_file", path=str(path), edits=[{"oldText": "two", "newText": "2"}])
        assert path.read_text() == "one\n2\nthird line, from elsewhere\n"
        # The session's own change keeps it current: a second edit needs no new read.
        await s.ok("edit_file", path=str(path), edits=[{"oldText": "one", "newText": "1"}])
        assert path.read_text() == "1\n2\nthird line, from elsewhere\n"


async def test_files_never_read_are_not_guarded_and_the_guard_can_be_turned_off(tmp_path):
    (tmp_path / "fsmcp.toml").write_text("stale_guard = false\n")
    path = tmp_path / "a.txt"
    path.write_text("a\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        await s.ok("edit_file", path=str(path), edits=[{"oldText": "a", "newText": "b"}])  # never read
    async with serve_stdio("--config", str(tmp_path / "fsmcp.toml"), str(tmp_path)) as client:
        s = ToolCalls(client)
        await s.ok("read_file", path=str(path))
        path.write_text("c\n")
        await s.ok("edit_file", path=str(path), edits=[{"oldText": "c", "newText": "d"}])
    assert path.read_text() == "d\n"


async def test_each_session_has_its_own_reads(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("a\n")
    async with serve_stdio(str(tmp_path)) as first, serve_stdio(str(tmp_path)) as second:
        one, two = ToolCalls(first), ToolCalls(second)
        await one.ok("read_file", path=str(path))
        await two.ok("read_file", path=str(path))
        await two.ok("write_file", path=str(path), content="b\n")  # for the first session, someone else
        await one.fail("write_file", "EDIT_CONFLICT", path=str(path), content="c\n")
        assert path.read_text() == "b\n"


async def test_expected_version_current_and_stale(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("a\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        current = _version(await s.ok("get_file_info", path=str(path)))
        await s.ok("edit_file", path=str(path), edits=[{"oldText": "a", "newText": "b"}], expectedVersion=current)
        assert path.read_text() == "b\n"
        text = await s.fail("write_file", "EDIT_CONFLICT", path=str(path), content="c\n", expectedVersion=current)
        assert f"not the expected {current}" in text
        assert path.read_text() == "b\n"
        now = _version(await s.ok("get_file_info", path=str(path)))
        assert now != current
        await s.fail("delete_file", "EDIT_CONFLICT", path=str(path), expectedVersion=current)
        await s.ok("write_file", path=str(path), content="c\n", expectedVersion=now)
        assert path.read_text() == "c\n"


async def test_twenty_concurrent_edits_of_different_lines_all_land(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(20)))
    async with serve_stdio(str(tmp_path)) as client:
        answers: list[tuple[int, bool]] = []

        async def edit(i: int) -> None:
            result = await client.call_tool("edit_file", {"path": str(path), "edits": [{"oldText": f"line {i}\n", "newText": f"edited {i}\n"}]})
            answers.append((i, bool(result.is_error)))

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(edit, i)
    text = path.read_text()
    done = [i for i, failed in answers if not failed]
    lost = [i for i in done if f"edited {i}\n" not in text]
    assert lost == [], f"{len(lost)} edits answered success and are not in the file"
    assert len(done) == 20


async def _version_of(s: ToolCalls, path) -> str:
    return _version(await s.ok("get_file_info", path=str(path)))


async def test_create_directory_takes_the_version_of_the_directory_already_there(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        old = await _version_of(s, box)
        await s.ok("create_directory", path=str(box), expectedVersion=old)
        (box / "made-outside").write_text("")
        await s.fail("create_directory", "EDIT_CONFLICT", path=str(box), expectedVersion=old)
        await s.fail("create_directory", "EDIT_CONFLICT", path=str(tmp_path / "new"), expectedVersion=old)
        assert not (tmp_path / "new").exists()


async def test_edit_files_takes_the_version_of_the_one_file_its_paths_name(tmp_path):
    a, x = tmp_path / "a.txt", tmp_path / "x.txt"
    a.write_text("a\n")
    x.write_text("x\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        old = await _version_of(s, a)
        await s.ok("edit_files", paths=[str(a)], edits=[{"oldText": "a", "newText": "b"}], expectedVersion=old)
        assert a.read_text() == "b\n"
        await s.fail("edit_files", "EDIT_CONFLICT", paths=[str(a)], edits=[{"oldText": "b", "newText": "c"}], expectedVersion=old)
        now = await _version_of(s, a)
        text = await s.fail("edit_files", "INVALID_PARAMS", paths=[str(a), str(x)], edits=[{"oldText": "b", "newText": "c"}], expectedVersion=now)
        assert "one file" in text, text
        assert a.read_text() == "b\n" and x.read_text() == "x\n"


async def test_compress_files_takes_the_version_of_the_archive_it_replaces(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out.zip"
    src.mkdir()
    (src / "x.txt").write_text("x\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        await s.ok("compress_files", paths=[str(src)], output=str(out))
        old = await _version_of(s, out)
        await s.ok("compress_files", paths=[str(src)], output=str(out), overwrite=True, expectedVersion=old)
        made = out.read_bytes()
        await s.fail("compress_files", "EDIT_CONFLICT", paths=[str(src / "x.txt")], output=str(out), overwrite=True, expectedVersion=old)
        assert out.read_bytes() == made


async def test_extract_archive_takes_the_version_of_the_destination_directory(tmp_path):
    out, dest = tmp_path / "out.zip", tmp_path / "dest"
    dest.mkdir()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("x.txt", "x\n")
    landed = dest / "x.txt"
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        old = await _version_of(s, dest)
        await s.ok("extract_archive", archive=str(out), destination=str(dest), expectedVersion=old)
        landed.write_text("mine\n")
        # The first extract added an entry to dest, so old is stale now.
        await s.fail("extract_archive", "EDIT_CONFLICT", archive=str(out), destination=str(dest), overwrite=True, expectedVersion=old)
        assert landed.read_text() == "mine\n"
        await s.ok("extract_archive", archive=str(out), destination=str(dest), overwrite=True, expectedVersion=await _version_of(s, dest))
        assert landed.read_text() == "x\n"


async def test_batch_operations_pass_expected_version_to_their_steps(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("a\n")
    async with serve_stdio(str(tmp_path)) as client:
        s = ToolCalls(client)
        old = _version(await s.ok("get_file_info", path=str(a)))
        a.write_text("changed outside\n")
        steps = [
            {"tool": "write_file", "arguments": {"path": str(b), "content": "b\n"}},
            {"tool": "write_file", "arguments": {"path": str(a), "content": "mine\n", "expectedVersion": old}},
        ]
        text = await s.fail("batch_operations", "EDIT_CONFLICT", operations=steps, transactional=True)
        assert f"not the expected {old}" in text, text
        assert a.read_text() == "changed outside\n" and not b.exists()
        steps[1]["arguments"]["expectedVersion"] = _version(await s.ok("get_file_info", path=str(a)))
        await s.ok("batch_operations", operations=steps, transactional=True)
        assert a.read_text() == "mine\n" and b.read_text() == "b\n"
