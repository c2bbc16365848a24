"""The audit log: one JSON line per call, no content, rotated, with room for more fields."""

from __future__ import annotations

import json

import pytest

from fsmcp import READ_ONLY, Tool, ToolInput, audit_note, hookimpl
from fsmcp.testing import ToolCalls, connect, host_for, serve_stdio

pytestmark = pytest.mark.anyio

SECRET = "sk-live-7f3a9c2e1b0d4f6a8e5c3b1d9f7a2e4c"


async def test_a_thousand_calls_make_a_thousand_lines_without_the_secret(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "audit.jsonl"
    async with serve_stdio("--audit-log", str(log), str(root)) as client:
        s = ToolCalls(client)
        await s.ok("write_file", path=str(root / "key.txt"), content=f"API_KEY={SECRET}\n")
        await s.ok("edit_file", path=str(root / "key.txt"), edits=[{"oldText": SECRET, "newText": SECRET[::-1]}])
        await s.fail("read_file", "NOT_FOUND", path=str(root / "missing.txt"))
        for i in range(997):
            await s.ok("get_file_info", path=str(root / "key.txt"))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 1000
    assert SECRET not in log.read_text() and SECRET[::-1] not in log.read_text()
    first = lines[0]
    assert set(first) >= {"time", "session", "tool", "paths", "outcome", "durationMs"}
    assert first["tool"] == "write_file" and first["paths"] == [str(root / "key.txt")] and first["outcome"] == "ok"
    assert first["args"]["content"]["bytes"] == len(f"API_KEY={SECRET}\n")
    assert lines[2]["outcome"] == "NOT_FOUND"
    assert len({line["session"] for line in lines}) == 1
    assert all(isinstance(line["durationMs"], float) and line["durationMs"] >= 0 for line in lines)


async def test_the_log_is_rotated_at_the_size_the_operator_sets(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "audit.jsonl"
    (tmp_path / "fsmcp.toml").write_text('audit_log = "audit.jsonl"\naudit_log_max_bytes = 4096\naudit_log_keep = 2\n')
    async with serve_stdio("--config", str(tmp_path / "fsmcp.toml"), str(root)) as client:
        s = ToolCalls(client)
        for _ in range(200):
            await s.ok("list_allowed_directories")
    kept = sorted(p.name for p in tmp_path.glob("audit.jsonl*"))
    assert kept == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    for name in kept:
        data = (tmp_path / name).read_text()
        assert 0 < len(data) <= 4096
        assert all(json.loads(line)["tool"] == "list_allowed_directories" for line in data.splitlines())


class _In(ToolInput):
    path: str


def _peek(args: _In, ctx) -> str:
    audit_note(allowedOnce=[args.path], tool="forged")
    return "ok"


class _Peek:
    @hookimpl
    def fsmcp_register_tools(self, register):
        register(Tool("peek", "Peek.", _In, _peek, READ_ONLY))


async def test_code_running_for_a_call_adds_fields_to_its_line(tmp_path):
    log = tmp_path / "audit.jsonl"
    host = host_for([tmp_path], [("peek", _Peek())], audit_log=str(log))
    async with connect(host) as client:
        await client.call_tool("peek", {"path": "x"})
    (line,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert line["allowedOnce"] == ["x"]
    assert line["tool"] == "peek"  # the standard fields are not replaced


async def test_the_line_names_the_program_run_the_paths_an_undo_restored_and_each_path_once(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.txt").write_text(f"{SECRET}\n")
    log = tmp_path / "audit.jsonl"
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    async with serve_stdio("--audit-log", str(log), str(root), env=env) as client:
        s = ToolCalls(client)
        await s.ok("run_command", command="cat", args=["f.txt"], workingDirectory=str(root))
        await s.ok("write_files", files=[{"path": str(root / "a.txt"), "content": SECRET}, {"path": str(root / "b.txt"), "content": "B"}])
        await s.ok("undo_change")
        step = {"path": str(root / "f.txt")}
        edit = {**step, "edits": [{"oldText": SECRET, "newText": "gone"}]}
        await s.ok("batch_operations", operations=[{"tool": "read_file", "arguments": step}, {"tool": "edit_file", "arguments": edit}])
    assert SECRET not in log.read_text()
    run, write, undo, batch = [json.loads(line) for line in log.read_text().splitlines()]
    # The program by its file; its arguments stay a size and a hash.
    assert run["program"] in ("/usr/bin/cat", "/bin/cat"), run
    assert run["args"]["args"] == {"bytes": 9, "sha256": run["args"]["args"]["sha256"]}, run
    # write_files: each file's content as a size and a hash, beside its path.
    assert write["paths"] == [str(root / "a.txt"), str(root / "b.txt")], write
    assert [item["content"]["bytes"] for item in write["args"]["files"]] == [len(SECRET), 1], write
    # The undo names no path in its arguments: the paths it restored.
    assert sorted(undo["paths"]) == [str(root / "a.txt"), str(root / "b.txt")], undo
    # A batch that reads and then edits a file names it once.
    assert batch["paths"] == [str(root / "f.txt")], batch
