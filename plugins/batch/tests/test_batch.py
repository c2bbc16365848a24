"""batch_operations: order, stopping and skipping, parallel reads, operation types, refusals, budget."""

from __future__ import annotations

import json

import anyio
import pytest
from fsmcp import READ_ONLY, Tool, ToolInput, hookimpl


@pytest.mark.anyio
async def test_each_operation_reports_in_order_then_a_summary(server, root):
    (root / "a.txt").write_text("alpha\n")
    async with server() as s:
        text = await s.ok(
            [
                {"tool": "read_file", "arguments": {"path": "a.txt"}},
                {"tool": "write_file", "arguments": {"path": "b.txt", "content": "beta"}},
                {"tool": "list_directory", "arguments": {"path": "."}},
            ]
        )
    assert text == (
        "[1] read_file OK\nalpha\n\n"
        f"[2] write_file OK\nSuccessfully wrote 4 bytes to {root}/b.txt (created)\n"
        "[3] list_directory OK\n[FILE] a.txt\n[FILE] b.txt\n"
        "Batch done: 3 operations, 3 ok, 0 failed, 0 skipped."
    )


@pytest.mark.anyio
async def test_the_first_failure_stops_the_batch_and_later_operations_are_skipped(server, root):
    async with server() as s:
        text = await s.ok(
            [
                {"tool": "write_file", "arguments": {"path": "a.txt", "content": "a"}},
                {"tool": "read_file", "arguments": {"path": "missing.txt"}},
                {"tool": "write_file", "arguments": {"path": "c.txt", "content": "c"}},
                {"tool": "read_file", "arguments": {"path": "a.txt"}},
            ]
        )
    assert f"[2] read_file ERROR NOT_FOUND: {root}/missing.txt does not exist" in text
    assert "[3] write_file SKIPPED (not run: operation 2 failed)\n[4] read_file SKIPPED (not run: operation 2 failed)\n" in text
    assert text.endswith(
        "Batch stopped at operation 2 (read_file): 4 operations, 1 ok, 1 failed, 2 skipped. "
        "Not rolled back (transactional is off): the changes of operation 1 stay."
    )
    assert (root / "a.txt").exists() and not (root / "c.txt").exists()


@pytest.mark.anyio
async def test_continue_on_error_goes_on_past_a_failure(server, root):
    async with server() as s:
        text = await s.ok(
            [
                {"tool": "delete_file", "arguments": {"path": "missing.txt"}, "continueOnError": True},
                {"tool": "write_file", "arguments": {"path": "c.txt", "content": "c"}},
                {"tool": "read_file", "arguments": {"path": "nope.txt"}, "continueOnError": True},
                {"tool": "read_file", "arguments": {"path": "c.txt"}},
            ]
        )
    assert "[1] delete_file ERROR NOT_FOUND: " in text
    assert "[3] read_file ERROR NOT_FOUND: " in text
    assert "[4] read_file OK\nc\n" in text
    assert text.endswith("Batch done: 4 operations, 2 ok, 2 failed, 0 skipped.")
    assert (root / "c.txt").read_text() == "c"


@pytest.mark.anyio
async def test_operation_types_and_parameter_names(server, root):
    (root / "config.json").write_text('{"a": 1}\nsecond\n')
    (root / "temp").mkdir()
    (root / "temp" / "cache.txt").write_text("cache")
    ops = [
        {"type": "read", "params": {"path": "config.json", "range": {"lines": {"from": 2, "to": 2}}}},
        {"type": "write", "params": {"file": "backup/config.json", "content": "copy"}},
        {"type": "copy", "params": {"source": "config.json", "destination": "c2.json"}},
        {"type": "move", "params": {"from": "c2.json", "to": "c3.json"}},
        {"type": "append", "params": {"path": "c3.json", "content": "more"}},
        {"type": "delete", "params": {"path": "temp/cache.txt"}, "continueOnError": True},
    ]
    async with server() as s:
        text = await s.ok(ops, transactional=True)
    for n, tool in enumerate(["read_file", "write_file", "copy_file", "move_file", "append_file", "delete_file"], 1):
        assert f"[{n}] {tool} OK" in text
    assert "[1] read_file OK\nsecond\n" in text
    assert (root / "backup" / "config.json").read_text() == "copy"
    assert (root / "c3.json").read_text() == '{"a": 1}\nsecond\nmore\n'
    assert not (root / "c2.json").exists() and not (root / "temp" / "cache.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "op, expected",
    [
        ({"tool": "no_such_tool", "arguments": {}}, "operation 2 (no_such_tool): unknown tool 'no_such_tool'; this server offers: append_file, copy_file,"),
        ({"tool": "batch_operations", "arguments": {"operations": []}}, "operation 2 (batch_operations): batch_operations cannot run inside batch_operations"),
        ({"tool": "write_file", "arguments": {"path": "x"}}, "operation 2 (write_file): invalid arguments for write_file: content: required. Parameters: path, content, encoding, lineCount, expectedVersion"),
        ({"tool": "read_file", "arguments": {"path": "x", "bogus": 1}}, "operation 2 (read_file): invalid arguments for read_file: bogus: unknown parameter"),
        ({"tol": "read_file", "arguments": {}}, "operations.1.tol: unknown parameter. An item of operations takes: tool, type, arguments, continueOnError."),
        ({"tool": "read_file", "type": "read", "arguments": {"path": "x"}}, "operations.1: give either tool"),
        ({"type": "rename", "params": {}}, "operations.1.type: type 'rename' is not one of read, write, copy, move, delete, append; to run any other tool, name it with tool"),
    ],
)
async def test_a_bad_operation_is_refused_before_anything_runs(server, root, op, expected):
    ops = [{"tool": "write_file", "arguments": {"path": "first.txt", "content": "1"}}, op]
    async with server() as s:
        text = await s.fail("INVALID_PARAMS", ops)
    assert expected in text
    assert not (root / "first.txt").exists()


@pytest.mark.anyio
async def test_batch_operations_cannot_name_itself_even_by_nesting_it_in_arguments(server):
    inner = {"operations": [{"tool": "list_allowed_directories"}]}
    async with server() as s:
        text = await s.fail("INVALID_PARAMS", [{"tool": "batch_operations", "arguments": inner}])
    assert "nothing was run: operation 1 (batch_operations): batch_operations cannot run inside batch_operations" in text
    assert "this server offers" not in text


@pytest.mark.anyio
async def test_at_most_100_operations(server, root):
    op = {"tool": "list_allowed_directories"}
    async with server() as s:
        assert "Batch done: 100 operations, 100 ok" in await s.ok([op] * 100)
        text = await s.fail("INVALID_PARAMS", [op] * 101)
    assert "operations: must be a list of at most 100 items, not a list" in text


@pytest.mark.anyio
async def test_operations_and_arguments_sent_as_json_text_or_null_are_accepted(server, root):
    ops = [
        {"tool": "write_file", "arguments": json.dumps({"path": "a.txt", "content": "a"})},
        {"tool": "list_allowed_directories", "arguments": None},
    ]
    async with server() as s:
        assert "Batch done: 2 operations, 2 ok" in await s.ok(json.dumps(ops))
    assert (root / "a.txt").read_text() == "a"


@pytest.mark.anyio
async def test_the_data_holds_the_same_facts(server, root):
    (root / "a.txt").write_text("alpha")
    async with server(format="json") as s:
        data = await s.data(
            [
                {"tool": "list_allowed_directories"},
                {"tool": "write_file", "arguments": {"path": "b.txt", "content": "b"}},
                {"tool": "copy_file", "arguments": {"source": "a.txt", "destination": "b.txt"}},
                {"tool": "read_file", "arguments": {"path": "a.txt"}},
            ],
            transactional=True,
        )
    ops = data.pop("operations")
    assert data == {"ok": 2, "failed": 1, "skipped": 1, "transactional": True, "rolledBack": True}
    assert [o["status"] for o in ops] == ["ok", "ok", "error", "skipped"]
    assert [o["tool"] for o in ops] == ["list_allowed_directories", "write_file", "copy_file", "read_file"]
    assert ops[0]["result"] == {"text": f"{root} (read-write)"}
    assert ops[1]["result"]["created"] is True
    assert ops[2]["error"]["code"] == "ALREADY_EXISTS"
    assert ops[3] == {"operation": 4, "tool": "read_file", "status": "skipped"}
    assert not (root / "b.txt").exists()


@pytest.mark.anyio
async def test_the_output_budget_is_shared_fairly(server, root):
    (root / "small.txt").write_text("tiny\n")
    for name in ("big1.txt", "big2.txt"):
        (root / name).write_text("".join(f"{name} line {i}\n" for i in range(2000)))
    ops = [{"tool": "read_file", "arguments": {"path": p}} for p in ("big1.txt", "small.txt", "big2.txt")]
    async with server(budget=6000) as s:
        text = await s.ok(ops)
    assert len(text) <= 6000
    assert "[2] read_file OK\ntiny\n" in text
    first, second = text.split("[2] read_file")[0], text.split("[3] read_file")[1]
    for part in (first, second):
        # Each step ran with its share of the budget, so the tool cut its own output and its
        # own way to continue survives.
        assert len(part) > 1000
        assert "[truncated: showed " in part and "startLine=" in part
    assert text.endswith("Batch done: 3 operations, 3 ok, 0 failed, 0 skipped.")


@pytest.mark.anyio
async def test_binary_content_of_a_step_is_passed_on(server, root):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    (root / "pic.png").write_bytes(png)
    async with server() as s:
        result = await s.client.call_tool("batch_operations", {"operations": [{"tool": "read_file", "arguments": {"path": "pic.png"}}]})
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image", "text"], kinds
    assert result.content[1].mime_type == "image/png"


class Gate:
    """Read-only tools that prove concurrency: ``wait`` returns only once ``open`` has run."""

    def __init__(self):
        self.event = anyio.Event()
        self.active = 0
        self.most = 0

    @hookimpl
    def fsmcp_register_tools(self, register):
        async def wait(args, ctx):
            await self.event.wait()
            return "waited"

        async def open_(args, ctx):
            self.event.set()
            return "opened"

        async def busy(args, ctx):
            self.active += 1
            self.most = max(self.most, self.active)
            for _ in range(5):
                await anyio.sleep(0)
            self.active -= 1
            return "busy"

        register(Tool("wait", "waits for open", ToolInput, wait, READ_ONLY))
        register(Tool("open", "opens the gate", ToolInput, open_, READ_ONLY))
        register(Tool("busy", "counts how many run at once", ToolInput, busy, READ_ONLY))


@pytest.mark.anyio
async def test_parallel_reads_run_together_and_report_in_order(server, root):
    for i in range(3):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    gate = Gate()
    ops = [
        {"tool": "read_file", "arguments": {"path": "f0.txt"}},
        {"tool": "wait"},
        {"tool": "read_file", "arguments": {"path": "f1.txt"}},
        {"tool": "open"},
        {"tool": "read_file", "arguments": {"path": "f2.txt"}},
    ]
    async with server([("gate", gate)]) as s:
        with anyio.fail_after(30):  # run one by one, "wait" would wait for ever
            text = await s.ok(ops, parallel=True)
    assert text == (
        "[1] read_file OK\nfile 0\n\n[2] wait OK\nwaited\n[3] read_file OK\nfile 1\n\n[4] open OK\nopened\n"
        "[5] read_file OK\nfile 2\n\nBatch done: 5 operations, 5 ok, 0 failed, 0 skipped."
    )


@pytest.mark.anyio
async def test_parallel_runs_at_most_eight_at_once_and_changes_alone(server, root):
    gate = Gate()
    ops = [{"tool": "busy"}] * 20 + [{"tool": "write_file", "arguments": {"path": "w.txt", "content": "w"}}] + [{"tool": "busy"}] * 3
    async with server([("gate", gate)]) as s:
        await s.ok(ops, parallel=True)
        assert gate.most == 8
        gate.most = 0
        await s.ok(ops)
        assert gate.most == 1


@pytest.mark.anyio
async def test_a_failure_in_a_parallel_run_stops_after_that_run(server, root):
    (root / "a.txt").write_text("a")
    ops = [
        {"tool": "read_file", "arguments": {"path": "missing"}},
        {"tool": "read_file", "arguments": {"path": "a.txt"}},
        {"tool": "write_file", "arguments": {"path": "w.txt", "content": "w"}},
    ]
    async with server() as s:
        text = await s.ok(ops, parallel=True)
    assert "[1] read_file ERROR NOT_FOUND" in text and "[2] read_file OK\na\n" in text
    assert "[3] write_file SKIPPED (not run: operation 1 failed)" in text
    assert not (root / "w.txt").exists()


@pytest.mark.anyio
async def test_progress_is_reported_per_operation(server, root):
    seen = []

    async def progress(done, total, message):
        seen.append((done, total, message))

    ops = [{"tool": "list_allowed_directories"}, {"tool": "write_file", "arguments": {"path": "a", "content": ""}}]
    async with server() as s:
        await s.client.call_tool("batch_operations", {"operations": ops}, progress_callback=progress)
    assert seen == [(1, 2, "list_allowed_directories (operation 1)"), (2, 2, "write_file (operation 2)")]
