"""The tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28) over stdio, with real programs.

The SDK's client declares the extension through a ``ClientExtension`` whose claim takes the
``resultType: "task"`` answer; ``tasks/get`` and ``tasks/cancel`` go through its session as
requests of their own. The protocol's edges are checked on the raw JSON lines. Every wait is
bounded by a count of polls or a generous deadline, never a time the machine must beat.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import types
from mcp.client.extension import ClientExtension, ResultClaim
from pydantic import ConfigDict, Field

from fsmcp.serve import tasks as task_store
from fsmcp.testing import forked, pid_in, processes_with, serve_stdio

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/tasks"
DEADLINE = 60  # seconds: a bound for a loaded machine; every wait ends at its event first
CONFIG = """
[plugins.shell]
allow = ["cat", "sh", "sleep"]
allow_shell = true
allow_unconfined = true
kill_grace = 0.5
"""


# -- the client's side of the extension, on the SDK's extension API -----------------------------


class CreatedTask(types.Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    ttl_ms: int | None = Field(alias="ttlMs")
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class AnyResult(types.Result):
    model_config = ConfigDict(extra="allow")


class TaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams


async def _unresolved(result: CreatedTask, ctx: Any) -> types.CallToolResult:
    raise AssertionError("the tests take the task themselves (allow_claimed=True)")


class Tasks(ClientExtension):
    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=_unresolved)]


async def get(client, task_id: str) -> dict[str, Any]:
    answer = await client.session.send_request(GetTask(params=TaskParams(taskId=task_id)), AnyResult)
    return answer.model_dump(by_alias=True)


async def until(client, task_id: str, done) -> dict[str, Any]:
    """Poll ``tasks/get`` (at its ``pollIntervalMs``, capped) until ``done(task)``."""
    with anyio.fail_after(DEADLINE):
        while True:
            task = await get(client, task_id)
            if done(task):
                return task
            await anyio.sleep(min(task.get("pollIntervalMs", 100), 200) / 1000)


# -- processes found by their command line -------------------------------------------------------


@pytest.fixture
def sixty():
    """``sixty()``: a sleep of about 60 s that no other process carries (so that a test finds its
    own by command line); whatever still carries one after the test is killed."""
    made: list[str] = []

    def marker() -> str:
        made.append(f"60.{os.getpid():07}{len(made):02}")
        return made[-1]

    yield marker
    for mark in made:
        for pid in processes_with(mark):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(autouse=True)
def a_file(root):
    (root / "a.txt").write_text("alpha\n")


@pytest.fixture
def served(root, tmp_path):
    config = tmp_path / "fsmcp.toml"
    config.write_text(CONFIG)
    return lambda **options: serve_stdio(str(root), "--config", str(config), "--enable", "shell,read", mode="2026-07-28", **options)


# -- the acceptance: a 60 s program cancelled, another completed --------------------------------


async def test_a_60_second_command_runs_as_a_task_is_polled_and_cancelled_and_its_processes_are_gone(root, served, sixty):
    marker = sixty()
    async with served(extensions=[Tasks()]) as client:
        created = await client.session.call_tool(
            "run_command", {"command": "sh", "args": ["-c", f"sleep {marker} & sleep {marker}"]}, allow_claimed=True
        )
        assert isinstance(created, CreatedTask) and created.status == "working"
        assert created.ttl_ms == task_store.TTL_MS and created.poll_interval_ms == task_store.POLL_INTERVAL_MS
        with anyio.fail_after(DEADLINE):
            while len(processes_with(marker)) < 2:  # the program and its child both run
                await anyio.sleep(0.05)
        polled = await get(client, created.task_id)
        assert polled["status"] == "working" and polled["resultType"] == "complete" and "result" not in polled

        cancelled = await client.session.send_request(CancelTask(params=TaskParams(taskId=created.task_id)), AnyResult)
        assert cancelled.model_dump(by_alias=True, exclude={"meta"}) == {"resultType": "complete"}
        with anyio.fail_after(30):  # the whole process group, not only the shell
            while processes_with(marker):
                await anyio.sleep(0.05)
        final = await until(client, created.task_id, lambda task: task["status"] != "working")
        assert final["status"] == "cancelled" and final["statusMessage"] == "cancelled by the client (tasks/cancel)"
        assert "result" not in final and "error" not in final

        # Terminal is terminal: a second cancel is acknowledged and changes nothing.
        await client.session.send_request(CancelTask(params=TaskParams(taskId=created.task_id)), AnyResult)
        assert (await get(client, created.task_id))["status"] == "cancelled"


async def test_a_cancelled_task_applies_nothing_of_what_its_program_wrote(root, served, sixty):
    marker = sixty()
    async with served(extensions=[Tasks()]) as client:
        created = await client.session.call_tool("run_shell", {"command": f"echo made > made.txt; sleep {marker}"}, allow_claimed=True)
        with anyio.fail_after(DEADLINE):
            while not processes_with(marker):
                await anyio.sleep(0.05)
        await client.session.send_request(CancelTask(params=TaskParams(taskId=created.task_id)), AnyResult)
        await until(client, created.task_id, lambda task: task["status"] == "cancelled")
        with anyio.fail_after(30):
            while processes_with(marker):
                await anyio.sleep(0.05)
        # As for notifications/cancelled (docs/tools/shell.md): the program's view is discarded.
        assert not (root / "made.txt").exists()


async def test_a_completed_task_holds_exactly_the_result_the_plain_call_returns(root, served):
    (root / "notes.txt").write_text("first\nsecond\n")
    arguments = {"command": "cat", "args": ["notes.txt"]}
    async with served(extensions=[Tasks()]) as client:
        created = await client.session.call_tool("run_command", arguments, allow_claimed=True)
        assert isinstance(created, CreatedTask)
        done = await until(client, created.task_id, lambda task: task["status"] != "working")
    async with served() as plain_client:
        plain = await plain_client.call_tool("run_command", arguments)
    assert done["status"] == "completed" and done["ttlMs"] >= task_store.TTL_MS
    result = types.CallToolResult.model_validate(done["result"])
    assert result.model_dump(exclude={"meta"}) == plain.model_dump(exclude={"meta"})
    assert "exit_code: 0\nstdout:\nfirst\nsecond\n" in result.content[0].text
    assert done["result"]["resultType"] == "complete"


async def test_a_task_is_read_by_another_server_process_and_its_file_is_private(root, served, tmp_path):
    async with served(extensions=[Tasks()]) as client:
        created = await client.session.call_tool("run_command", {"command": "cat", "args": ["a.txt"]}, allow_claimed=True)
        done = await until(client, created.task_id, lambda task: task["status"] == "completed")
    async with served(extensions=[Tasks()]) as other:  # a new process: only the store is shared
        assert await get(other, created.task_id) == done
    place = task_store.directory()
    assert stat.S_IMODE(place.stat().st_mode) == 0o700
    record = place / f"{created.task_id}.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600


# -- the protocol's edges, on the raw lines -----------------------------------------------------

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
DECLARED = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}}}


def request(id_: object, method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def exchange(root: Path, config: Path, *messages: dict) -> dict[Any, dict]:
    """Feed ``messages`` to ``fsmcp serve`` as a file; its answers by id (the tasks it started run to their end first)."""
    requests = root.parent / "requests.jsonl"
    requests.write_text("".join(json.dumps(m) + "\n" for m in messages))
    with open(requests, "rb") as stdin:
        done = subprocess.run([*forked("serve"), str(root), "--config", str(config), "--enable", "shell,read"], stdin=stdin, capture_output=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr.decode()
    return {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "fsmcp.toml"
    path.write_text(CONFIG)
    return path


def test_a_client_without_the_extension_sees_no_change(root, config):
    call = {"name": "run_command", "arguments": {"command": "cat", "args": ["a.txt"]}}
    plain = exchange(
        root, config,
        request(1, "server/discover", {"_meta": MODERN}),
        request(2, "tools/list", {"_meta": MODERN}),
        request(3, "tools/call", {**call, "_meta": MODERN}),
        request(4, "tasks/get", {"taskId": "0" * 32, "_meta": MODERN}),
        request(5, "tasks/cancel", {"taskId": "0" * 32, "_meta": MODERN}),
    )
    declared = exchange(root, config, request(1, "server/discover", {"_meta": DECLARED}), request(2, "tools/list", {"_meta": DECLARED}))
    assert plain[1]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert declared[1]["result"]["capabilities"] == {"tools": {"listChanged": False}, "extensions": {EXTENSION: {}}}
    assert plain[2] == declared[2]  # the tool list carries nothing of tasks, declared or not
    assert plain[3]["result"]["resultType"] == "complete"
    assert plain[3]["result"]["content"] == [{"type": "text", "text": "exit_code: 0\nstdout:\nalpha\nstderr:"}]
    for id_ in (4, 5):
        assert plain[id_]["error"]["code"] == -32021
        assert plain[id_]["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def test_the_handshake_era_has_no_task_methods(root, config):
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    answers = exchange(
        root, config,
        request(0, "initialize", initialize),
        request(1, "tools/call", {"name": "run_command", "arguments": {"command": "cat", "args": ["a.txt"]}}),
        request(2, "tasks/get", {"taskId": "0" * 32}),
    )
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "exit_code: 0\nstdout:\nalpha\nstderr:"}]
    assert "resultType" not in answers[1]["result"]
    assert answers[2]["error"] == {"code": -32601, "message": "Method not found", "data": "tasks/get"}


def test_quick_tools_stay_plain_and_unknown_or_forged_tasks_are_not_found(root, config):
    place = task_store.directory()
    place.mkdir(parents=True, exist_ok=True, mode=0o700)
    forged = "f" * 32
    (place / f"{forged}.json").write_text(json.dumps({"taskId": forged, "status": "completed", "result": "not an object"}))
    (place / ("e" * 32 + ".json")).symlink_to(place / f"{forged}.json")
    answers = exchange(
        root, config,
        request(1, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": DECLARED}),
        request(2, "tasks/get", {"taskId": "0" * 32, "_meta": DECLARED}),
        request(3, "tasks/get", {"taskId": "../../etc/passwd", "_meta": DECLARED}),
        request(4, "tasks/get", {"taskId": forged, "_meta": DECLARED}),
        request(5, "tasks/get", {"taskId": "e" * 32, "_meta": DECLARED}),
        request(6, "tasks/get", {"_meta": DECLARED}),
    )
    assert answers[1]["result"]["resultType"] == "complete"  # not a long tool: no task
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "alpha\n"}]
    for id_ in (2, 3, 4, 5, 6):
        assert answers[id_]["error"]["code"] == -32602, answers[id_]
    assert "Task not found" in answers[2]["error"]["message"]
    assert "taskId" in answers[6]["error"]["message"]


def test_a_task_whose_server_died_is_failed_for_the_next_process(root, config, tmp_path, sixty):
    marker = sixty()
    pid_file = tmp_path / "server.pid"
    call = request(1, "tools/call", {"name": "run_command", "arguments": {"command": "sleep", "args": [marker]}, "_meta": DECLARED})
    server = subprocess.Popen(
        [*forked("serve", pid_file=pid_file), str(root), "--config", str(config), "--enable", "shell,read"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        server.stdin.write((json.dumps(call) + "\n").encode())
        server.stdin.flush()
        created = json.loads(server.stdout.readline())["result"]
        assert created["resultType"] == "task" and created["status"] == "working"
        for _ in range(int(DEADLINE / 0.05)):
            if processes_with(marker):
                break
            anyio.run(anyio.sleep, 0.05)
        os.kill(pid_in(pid_file), signal.SIGKILL)
        server.wait(timeout=DEADLINE)
    finally:
        server.kill()
        server.wait()
    answers = exchange(root, config, request(2, "tasks/get", {"taskId": created["taskId"], "_meta": DECLARED}))
    task = answers[2]["result"]
    assert task["status"] == "failed" and task["error"]["code"] == -32603
    assert "ended before the task did" in task["statusMessage"]


class Live:
    """``fsmcp serve`` on live pipes: a request sent, its answer read, one line at a time."""

    def __init__(self, root: Path, config: Path, families: str = "shell,read,search,archive,batch"):
        argv = [*forked("serve"), str(root), "--config", str(config), "--enable", families]
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.last = 0

    def ask(self, method: str, params: dict) -> dict:
        self.last += 1
        self.process.stdin.write((json.dumps(request(self.last, method, params)) + "\n").encode())
        self.process.stdin.flush()
        while True:  # no notification is sent to a task's client; the answer is the next line with its id
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.last:
                return message

    def until(self, task_id: str, meta: dict, done) -> dict:
        for _ in range(int(DEADLINE / 0.05)):  # by count: a loaded machine is slower, never stuck
            task = self.ask("tasks/get", {"taskId": task_id, "_meta": meta})["result"]
            if done(task):
                return task
            anyio.run(anyio.sleep, 0.05)
        raise AssertionError(f"task {task_id} never got there: {task}")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=DEADLINE)


def test_a_task_asks_its_user_through_tasks_get_and_takes_the_answers_from_tasks_update(root, config):
    (root / ".env").write_text("TOKEN=task-s3cret\n")
    meta = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXTENSION: {}}}}
    server = Live(root, config)
    try:
        search = {"regex": "TOKEN", "globs": [".env"]}
        created = server.ask("tools/call", {"name": "grep_files", "arguments": search, "_meta": meta})["result"]
        assert created["resultType"] == "task"
        asking = server.until(created["taskId"], meta, lambda task: task["status"] != "working")
        assert asking["status"] == "input_required" and list(asking["inputRequests"]) == ["fsmcp.ask.0"]
        question = asking["inputRequests"]["fsmcp.ask.0"]
        assert question["method"] == "elicitation/create" and str(root / ".env") in question["params"]["message"]
        assert "task-s3cret" not in json.dumps(asking)

        # An answer to a key that is not outstanding is ignored: the task still waits.
        stray = server.ask("tasks/update", {"taskId": created["taskId"], "inputResponses": {"fsmcp.ask.9": {"action": "accept"}}, "_meta": meta})
        assert stray["result"]["resultType"] == "complete"
        assert server.ask("tasks/get", {"taskId": created["taskId"], "_meta": meta})["result"]["status"] == "input_required"

        allow = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}
        assert "error" not in server.ask("tasks/update", {"taskId": created["taskId"], "inputResponses": allow, "_meta": meta})
        done = server.until(created["taskId"], meta, lambda task: task["status"] not in ("working", "input_required"))
        assert done["status"] == "completed" and "inputRequests" not in done
        # What the same call answers without the extension, in its two rounds (input_required, then the answer).
        plain_meta = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        first = server.ask("tools/call", {"name": "grep_files", "arguments": search, "_meta": plain_meta})["result"]
        assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["fsmcp.ask.0"]
        again = {"name": "grep_files", "arguments": search, "_meta": plain_meta, "inputResponses": allow, "requestState": first["requestState"]}
        plain = server.ask("tools/call", again)["result"]
        assert done["result"]["content"] == plain["content"] and done["result"]["isError"] == plain["isError"]
        assert server.ask("tasks/update", {"taskId": "0" * 32, "inputResponses": {}, "_meta": meta})["error"]["code"] == -32602
    finally:
        server.close()


def _kept(place: Path, task_id: str, created: float) -> None:
    record = {
        "taskId": task_id, "status": "completed", "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": task_store.TTL_MS, "pollIntervalMs": 1000, "created": created, "result": {"content": [], "isError": False},
    }
    (place / f"{task_id}.json").write_text(json.dumps(record))


def test_the_store_is_bounded_expired_tasks_go_and_a_full_or_unsafe_store_serves_plain_calls(root, config):
    import time

    place = task_store.directory()
    place.mkdir(parents=True, mode=0o700)
    now = time.time()
    expired = "a" * 32
    _kept(place, expired, now - 2 * task_store.TTL_MS / 1000)
    for n in range(task_store.MAX_TASKS):
        _kept(place, f"{n:032x}", now)
    call = request(1, "tools/call", {"name": "run_command", "arguments": {"command": "cat", "args": ["a.txt"]}, "_meta": DECLARED})
    full = exchange(root, config, call)[1]["result"]
    assert full["resultType"] == "complete" and full["content"][0]["text"] == "exit_code: 0\nstdout:\nalpha\nstderr:"
    assert not (place / f"{expired}.json").exists()  # removed on the way

    (place / f"{0:032x}.json").unlink()
    assert exchange(root, config, call)[1]["result"]["resultType"] == "task"  # room again

    place.chmod(0o755)  # open to others: not the server's own
    unsafe = exchange(root, config, call)[1]["result"]
    assert unsafe["resultType"] == "complete" and unsafe["content"][0]["text"] == "exit_code: 0\nstdout:\nalpha\nstderr:"


def test_a_client_offering_roots_gives_them_first_and_the_task_runs_within_them(root, config, tmp_path):
    (root / "in").mkdir()
    (root / "in" / "b.txt").write_text("inside\n")
    meta = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"roots": {}, "extensions": {EXTENSION: {}}}}
    server = Live(root, config)
    try:
        call = {"name": "run_command", "arguments": {"command": "cat", "args": [str(root / "a.txt")]}, "_meta": meta}
        first = server.ask("tools/call", call)["result"]
        assert first["resultType"] == "input_required" and first["inputRequests"] == {"roots": {"method": "roots/list"}}
        roots = {"roots": {"roots": [{"uri": (root / "in").as_uri()}]}}
        created = server.ask("tools/call", {**call, "inputResponses": roots})["result"]
        assert created["resultType"] == "task"
        done = server.until(created["taskId"], meta, lambda task: task["status"] != "working")
        # a.txt lies outside the client's root: refused, as the plain call would refuse it.
        assert done["status"] == "completed" and done["result"]["isError"]
        assert done["result"]["content"][0]["text"].startswith("ACCESS_DENIED")
        inside = server.ask("tools/call", {**call, "arguments": {"command": "cat", "args": [str(root / "in" / "b.txt")]}})["result"]
        done = server.until(inside["taskId"], meta, lambda task: task["status"] != "working")
        assert done["result"]["content"][0]["text"] == "exit_code: 0\nstdout:\ninside\nstderr:"
    finally:
        server.close()


def test_a_task_is_cancelled_through_another_server_process(root, config, sixty):
    marker = sixty()
    server = Live(root, config)
    try:
        call = {"name": "run_command", "arguments": {"command": "sh", "args": ["-c", f"sleep {marker} & sleep {marker}"]}, "_meta": DECLARED}
        created = server.ask("tools/call", call)["result"]
        for _ in range(int(DEADLINE / 0.05)):
            if len(processes_with(marker)) >= 2:
                break
            anyio.run(anyio.sleep, 0.05)
        else:
            raise AssertionError("the program never started")
        other = exchange(root, config, request(7, "tasks/cancel", {"taskId": created["taskId"], "_meta": DECLARED}))
        assert other[7]["result"]["resultType"] == "complete"
        for _ in range(int(30 / 0.05)):  # the process group is gone within seconds
            if not processes_with(marker):
                break
            anyio.run(anyio.sleep, 0.05)
        else:
            raise AssertionError(f"still running: {processes_with(marker)}")
        done = server.until(created["taskId"], DECLARED, lambda task: task["status"] != "working")
        assert done["status"] == "cancelled" and done["statusMessage"] == "cancelled by the client (tasks/cancel)"
        assert not (task_store.directory() / f"{created['taskId']}.cancel").exists()
    finally:
        server.close()


CALLS = {
    "grep_files": ({"regex": "alpha", "directory": "."}, []),
    "batch_operations": ({"operations": [{"tool": "read_file", "arguments": {"path": "a.txt"}}, {"tool": "get_file_info", "arguments": {"path": "a.txt"}}]}, []),
    "compress_files": ({"paths": ["a.txt"], "output": "out.zip"}, ["out.zip"]),
    "extract_archive": ({"archive": "in.zip", "destination": "unpacked"}, ["unpacked"]),
}


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_every_long_tool_runs_as_a_task_and_ends_with_the_plain_call_s_result(root, tmp_path, tool):
    import shutil
    import zipfile

    with zipfile.ZipFile(root / "in.zip", "w") as archive:
        archive.writestr("inner.txt", "packed\n")
    config = tmp_path / "all.toml"
    config.write_text(CONFIG)
    arguments, made = CALLS[tool]
    server = Live(root, config)
    try:
        created = server.ask("tools/call", {"name": tool, "arguments": arguments, "_meta": DECLARED})["result"]
        assert created["resultType"] == "task", created
        done = server.until(created["taskId"], DECLARED, lambda task: task["status"] != "working")
        for name in made:  # the tree as it was before the task, for the plain call
            shutil.rmtree(root / name) if (root / name).is_dir() else (root / name).unlink()
        plain = server.ask("tools/call", {"name": tool, "arguments": arguments, "_meta": MODERN})["result"]
    finally:
        server.close()
    assert done["status"] == "completed" and not done["result"]["isError"], done
    assert plain["resultType"] == "complete"
    assert done["result"]["content"] == plain["content"]
    assert done["result"].get("structuredContent") == plain.get("structuredContent")


def test_a_client_that_leaves_cancels_its_running_tasks(root, config, sixty):
    marker = sixty()
    server = Live(root, config)
    call = {"name": "run_command", "arguments": {"command": "sleep", "args": [marker]}, "_meta": DECLARED}
    created = server.ask("tools/call", call)["result"]
    for _ in range(int(DEADLINE / 0.05)):
        if processes_with(marker):
            break
        anyio.run(anyio.sleep, 0.05)
    server.close()  # stdio's way to leave: the server ends, and with it the task's program
    for _ in range(int(30 / 0.05)):
        if not processes_with(marker):
            break
        anyio.run(anyio.sleep, 0.05)
    assert processes_with(marker) == []
    task = exchange(root, config, request(2, "tasks/get", {"taskId": created["taskId"], "_meta": DECLARED}))[2]["result"]
    assert task["status"] == "cancelled" and task["statusMessage"] == "the server stopped before the task ended"
