"""The stdio transport the host speaks itself (``fsmcp/serve/stdio.py``): both protocol eras without the
SDK, and the protocol's edges, byte by byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import anyio
import pytest
from mcp import MCPDeprecationWarning, types

from fsmcp.testing import forked, pid_in, serve_stdio, text_of

TIMEOUT = 20


def exchange(root: Path, *lines: str | dict | list, args: tuple[str, ...] = (), python_args: tuple[str, ...] = ()) -> tuple[list[dict], str]:
    """Feed ``lines`` to ``fsmcp serve`` as a file on stdin; every message it wrote, and its stderr.

    The server is forked (``forked``): what it answers is the product's, not the interpreter's
    start. With ``python_args`` it is a new ``python -m fsmcp`` (what it imports is the point)."""
    requests = root.parent / "requests.jsonl"
    requests.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    argv = [sys.executable, *python_args, "-m", "fsmcp", "serve"] if python_args else forked("serve")
    with open(requests, "rb") as stdin:
        done = subprocess.run([*argv, str(root), *args], stdin=stdin, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode()


def initialize(version: str = "2025-11-25", id_: int = 0, **capabilities: dict) -> dict:
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}}
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": params}


def request(id_: object, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})}


def by_id(messages: list[dict]) -> dict:
    return {m.get("id"): m for m in messages if "method" not in m}


@pytest.mark.parametrize(("asked", "agreed"), [("2024-11-05", "2024-11-05"), ("2025-06-18", "2025-06-18"), ("1999-01-01", "2025-11-25")])
def test_initialize_agrees_on_the_version_asked_for_or_offers_the_newest(root, asked, agreed):
    answers, _ = exchange(root, initialize(asked), request(1, "tools/list"))
    result = by_id(answers)[0]["result"]
    assert result["protocolVersion"] == agreed
    assert result["serverInfo"]["name"] == "fsmcp"
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert str(root) in result["instructions"]
    assert "read_file" in {tool["name"] for tool in by_id(answers)[1]["result"]["tools"]}


def test_requests_before_initialize_are_refused_and_ping_is_answered(root):
    answers = by_id(exchange(root, request(1, "tools/list"), request(2, "ping"), initialize(id_=3), request(4, "tools/list"))[0])
    assert answers[1]["error"]["code"] == -32600
    assert "initialize" in answers[1]["error"]["message"]
    assert answers[2]["result"] == {}
    assert answers[4]["result"]["tools"]


def test_what_is_no_request_gets_an_error_that_says_so(root):
    answers, _ = exchange(
        root,
        initialize(),
        "not json",
        "[1, 2]",
        '{"jsonrpc": "2.0", "id": [1], "method": "ping"}',
        '{"jsonrpc": "1.0", "id": 5, "method": "ping"}',
        request(6, "resources/list"),
        request(7, "tools/call", {"name": 7}),
        request(8, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}}),
    )
    errors = [m["error"] for m in answers if m.get("id") is None]
    assert [e["code"] for e in errors] == [-32700, -32600, -32600]
    assert "one message per line" in errors[1]["message"]
    answered = by_id(answers)
    assert answered[5]["error"]["code"] == -32600
    assert answered[6]["error"] == {"code": -32601, "message": "Method not found", "data": "resources/list"}
    assert answered[7]["error"]["code"] == -32602
    assert answered[8]["result"] == {"content": [{"type": "text", "text": "alpha\n"}], "isError": False}


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def test_neither_era_imports_the_sdk(root):
    call = request(1, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}})
    answers, imports = exchange(root, initialize(), call, python_args=("-X", "importtime"))
    assert by_id(answers)[1]["result"]["content"][0]["text"] == "alpha\n"
    modern_call = request(1, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": MODERN})
    modern_answers, modern_imports = exchange(root, modern_call, python_args=("-X", "importtime"))
    assert by_id(modern_answers)[1]["result"]["content"][0]["text"] == "alpha\n"
    for lines in (imports, modern_imports):
        assert " mcp_types" not in lines and " mcp.server" not in lines and "| mcp\n" not in lines


def test_a_2026_connection_answers_with_result_types_and_the_server_s_name(root):
    answers = by_id(
        exchange(
            root,
            request(1, "server/discover", {"_meta": MODERN}),
            request(2, "tools/list", {"_meta": MODERN}),
            request(3, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": MODERN}),
            request(4, "ping", {"_meta": MODERN}),
        )[0]
    )
    discovered = answers[1]["result"]
    assert discovered["supportedVersions"] == ["2026-07-28"] and discovered["capabilities"] == {"tools": {"listChanged": False}}
    for id_ in (1, 2, 3):
        assert answers[id_]["result"]["resultType"] == "complete"
        assert answers[id_]["result"]["_meta"][SERVER_INFO]["name"] == "fsmcp"
    assert "read_file" in {tool["name"] for tool in answers[2]["result"]["tools"]}
    assert answers[3]["result"]["content"] == [{"type": "text", "text": "alpha\n"}]
    assert answers[4]["error"]["code"] == -32601  # the 2026-07-28 protocol has no ping


def test_a_2026_request_without_its_envelope_or_in_another_version_is_refused(root):
    other = {**MODERN, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    answers = by_id(
        exchange(
            root,
            request(1, "tools/list", {"_meta": MODERN}),
            request(2, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            request(3, "tools/list", {"_meta": other}),
            initialize(id_=4),
            request(5, "tools/list"),
        )[0]
    )
    assert "tools" in answers[1]["result"]
    assert answers[2]["error"]["code"] == -32602 and "clientCapabilities" in answers[2]["error"]["message"]
    assert answers[3]["error"]["code"] == -32022
    assert answers[3]["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}
    assert answers[4]["error"]["code"] == -32022  # no handshake on a 2026-07-28 connection
    assert answers[5]["error"]["code"] == -32602


def test_a_2026_client_offering_roots_is_asked_for_them_by_an_input_required_result(root):
    (root / "mine").mkdir()
    (root / "mine" / "b.txt").write_text("beta\n")
    offering = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}
    read = {"name": "read_file", "arguments": {"path": str(root / "a.txt")}, "_meta": offering}
    listed = {"roots": [{"uri": (root / "mine").as_uri()}]}
    answers = by_id(
        exchange(
            root,
            request(1, "tools/call", read),
            request(2, "tools/call", {**read, "inputResponses": {"roots": listed}}),
            request(3, "tools/call", {**read, "arguments": {"path": str(root / "mine" / "b.txt")}}),
        )[0]
    )
    assert answers[1]["result"]["resultType"] == "input_required"
    assert answers[1]["result"]["inputRequests"] == {"roots": {"method": "roots/list"}}
    assert answers[2]["result"]["isError"] and answers[2]["result"]["content"][0]["text"].startswith("ACCESS_DENIED: ")
    assert answers[3]["result"]["content"][0]["text"] == "beta\n"  # the roots are kept for the connection


@pytest.mark.anyio
async def test_the_sdk_s_own_client_speaks_2026_07_28_with_the_server(root):
    async with serve_stdio(str(root), mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        assert text_of(await client.call_tool("read_file", {"path": "a.txt"})) == "alpha\n"


@pytest.mark.anyio
async def test_calls_run_side_by_side_and_answer_as_they_finish(root):
    """A call that waits does not hold up the calls behind it: the reads are answered while the
    watch waits, and the watch ends on the change the reader makes after them."""
    order: list[str] = []
    async with serve_stdio(str(root), "--enable", "read,watch,write") as client:
        await client.call_tool("watch_file", {"path": "a.txt"})  # the baseline; the next call waits for a change

        async def waiting() -> None:
            changed = await client.call_tool("watch_file", {"path": "a.txt", "waitSeconds": TIMEOUT})
            assert "a.txt" in text_of(changed), text_of(changed)
            order.append("watch")

        async def reading() -> None:
            for _ in range(5):
                assert text_of(await client.call_tool("read_file", {"path": "a.txt"})) == "alpha\n"
            order.append("reads")
            await client.call_tool("write_file", {"path": "a.txt", "content": "changed\n"})

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting)
                tg.start_soon(reading)
    assert order == ["reads", "watch"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_reaches_the_client_in_either_era(root, mode):
    (root / "src").mkdir()
    for i in range(5):
        (root / "src" / f"{i}.txt").write_text("x" * 1000)
    events: list[tuple[float, float | None]] = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total))

    async with serve_stdio(str(root), "--enable", "archive", mode=mode) as client:
        made = await client.call_tool("compress_files", {"files": ["src"], "output": "src.zip"}, progress_callback=record)
    assert not made.is_error, text_of(made)
    assert events and events[-1][0] == events[-1][1]


@pytest.mark.anyio
async def test_client_roots_narrow_a_handshake_era_connection_and_follow_its_changes(root):
    (root / "mine").mkdir()
    (root / "mine" / "b.txt").write_text("beta\n")
    listed = [root / "mine"]

    async def roots(ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=p.as_uri()) for p in listed])

    async with serve_stdio(str(root), list_roots_callback=roots) as client:
        assert text_of(await client.call_tool("read_file", {"path": str(root / "mine" / "b.txt")})) == "beta\n"
        refused = await client.call_tool("read_file", {"path": str(root / "a.txt")})
        assert refused.is_error and text_of(refused).startswith("ACCESS_DENIED: "), text_of(refused)
        listed[:] = [root]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # deprecated in 2026-07-28, live in this era
            await client.send_roots_list_changed()
        assert text_of(await client.call_tool("read_file", {"path": str(root / "a.txt")})) == "alpha\n"


def test_stdout_of_the_server_process_points_at_stderr_while_it_serves(root, tmp_path):
    """Anything a tool or a child process prints misses the wire."""
    pid_file = tmp_path / "server.pid"
    server = subprocess.Popen(forked("serve", str(root), pid_file=pid_file), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        server.stdin.write((json.dumps(initialize()) + "\n").encode())
        server.stdin.flush()
        assert "result" in json.loads(server.stdout.readline())
        fds = Path(f"/proc/{pid_in(pid_file)}/fd")
        assert os.readlink(fds / "1") == os.readlink(fds / "2")
        assert os.readlink(fds / "0") == os.devnull
    finally:
        server.stdin.close()
        server.wait(TIMEOUT)


def test_stdin_and_stdout_may_be_the_null_device_or_a_file(root, tmp_path):
    """Not only pipes: /dev/null (which epoll refuses) and plain files serve, and end cleanly."""
    serve = forked("serve", str(root))
    empty = subprocess.run(serve, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    assert empty.returncode == 0 and b"Traceback" not in empty.stderr and empty.stdout == b""
    requests = tmp_path / "in.jsonl"
    requests.write_text(json.dumps(initialize()) + "\n" + json.dumps(request(1, "tools/list")) + "\n")
    answers = tmp_path / "out.jsonl"
    with open(requests, "rb") as stdin, open(answers, "wb") as stdout:
        done = subprocess.run(serve, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in answers.read_text().splitlines()] == [0, 1]
    with open(requests, "rb") as stdin:
        quiet = subprocess.run(serve, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert quiet.returncode == 0 and b"Traceback" not in quiet.stderr


def test_a_2025_03_26_connection_takes_batches_and_answers_each_with_one_array(root):
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    answers, _ = exchange(
        root,
        initialize("2025-03-26"),
        [request(1, "ping"), request(2, "tools/call", read), {"jsonrpc": "2.0", "method": "notifications/initialized"}, 7, request(3, "no/such")],
        [{"jsonrpc": "2.0", "method": "notifications/initialized"}],  # notifications only: no answer at all
        [],
        [initialize("2025-03-26", id_=4)],
        request(5, "ping"),
    )
    assert answers[0]["result"]["protocolVersion"] == "2025-03-26"
    # The array is sent once the batch's call is done, so the lines after it may overtake it.
    [batch] = [answer for answer in answers if isinstance(answer, list)]
    assert sorted((m["id"] is None, str(m["id"])) for m in batch) == [(False, "1"), (False, "2"), (False, "3"), (True, "None")]
    answered = {m["id"]: m for m in batch}
    assert answered[1]["result"] == {}
    assert answered[2]["result"]["content"] == [{"type": "text", "text": "alpha\n"}]
    assert answered[3]["error"]["code"] == -32601
    assert answered[None]["error"]["code"] == -32600
    refused = [answer["error"] for answer in answers[1:] if isinstance(answer, dict) and answer["id"] is None]
    assert [e["code"] for e in refused] == [-32600, -32600]
    assert "empty" in refused[0]["message"] and "initialize" in refused[1]["message"]
    assert {"jsonrpc": "2.0", "id": 5, "result": {}} in answers
    assert len(answers) == 5


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", None])
def test_other_versions_keep_refusing_batches(root, version):
    opening = [initialize(version)] if version else []
    answers, _ = exchange(root, *opening, [request(1, "ping")])
    refused = answers[-1]
    assert refused["id"] is None and refused["error"]["code"] == -32600 and "one message per line" in refused["error"]["message"]


def test_a_2026_connection_refuses_batches(root):
    answers, _ = exchange(root, request(1, "tools/list", {"_meta": MODERN}), [request(2, "tools/list", {"_meta": MODERN})])
    assert "tools" in answers[0]["result"]
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32600


def test_a_handshake_connection_refuses_requests_in_the_2026_envelope(root):
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    answers = by_id(
        exchange(root, initialize(), request(1, "tools/list", {"_meta": MODERN}), request(2, "tools/call", {**read, "_meta": MODERN}), request(3, "tools/call", read))[0]
    )
    for id_ in (1, 2):
        assert answers[id_]["error"]["code"] == -32600 and "2026-07-28" in answers[id_]["error"]["message"]
    assert answers[3]["result"]["content"][0]["text"] == "alpha\n"


@pytest.mark.parametrize(
    "params",
    [
        None,
        {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        {"capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        {"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {"name": "raw", "version": "0"}},
        {"protocolVersion": "2025-11-25", "clientInfo": {"name": "raw", "version": "0"}},
        {"protocolVersion": "2025-11-25", "capabilities": {}},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": "raw"},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw"}},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": 1, "version": "0"}},
    ],
)
def test_initialize_with_params_of_the_wrong_shape_is_refused_and_the_connection_stays_unopened(root, params):
    answers = by_id(exchange(root, request(0, "initialize", params), request(1, "tools/list"), initialize(id_=2), request(3, "tools/list"))[0])
    assert answers[0]["error"]["code"] == -32602 and "initialize" in answers[0]["error"]["message"]
    assert answers[1]["error"]["code"] == -32600  # not initialized by the refused request
    assert answers[3]["result"]["tools"]


@pytest.mark.parametrize(
    ("method", "params", "named"),
    [
        ("tools/list", {"_meta": "x"}, "_meta"),
        ("tools/list", {"_meta": []}, "_meta"),
        ("tools/list", {"cursor": 5}, "cursor"),
        ("tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": {"progressToken": 1.5}}, "progressToken"),
        ("tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": {"progressToken": True}}, "progressToken"),
        ("tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": {"progressToken": {}}}, "progressToken"),
        ("tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": 3}, "_meta"),
        ("ping", {"_meta": "x"}, "_meta"),
    ],
)
def test_typed_fields_of_the_wrong_type_are_refused_with_invalid_params(root, method, params, named):
    answers = by_id(exchange(root, initialize(), request(1, method, params), request(2, "tools/call", {"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": {"progressToken": "t"}}))[0])
    assert answers[1]["error"]["code"] == -32602 and named in answers[1]["error"]["message"]
    assert answers[2]["result"]["content"][0]["text"] == "alpha\n"


@pytest.mark.parametrize(
    ("key", "value"),
    [("io.modelcontextprotocol/clientCapabilities", "all"), ("io.modelcontextprotocol/clientCapabilities", None), ("io.modelcontextprotocol/clientInfo", "raw")],
)
def test_a_2026_envelope_whose_client_fields_are_not_objects_is_refused(root, key, value):
    answers = by_id(exchange(root, request(1, "tools/list", {"_meta": MODERN}), request(2, "tools/list", {"_meta": {**MODERN, key: value}}))[0])
    assert "tools" in answers[1]["result"]
    assert answers[2]["error"]["code"] == -32602 and key in answers[2]["error"]["message"]


def test_quick_calls_answer_alike_on_the_loop_and_off_it(root):
    # read_file of a file past QUICK_BYTES starts on the loop and is run again in a worker; a
    # progress token keeps a call off the fast path; a small file is read on it.
    from fsmcp.paths.fs import QUICK_BYTES

    (root / "big.txt").write_text(("x" * 99 + "\n") * (QUICK_BYTES // 100 + 1))
    big = {"name": "read_file", "arguments": {"path": "big.txt", "head": 2}}
    small = {"name": "get_file_info", "arguments": {"path": "a.txt"}}
    answers, _ = exchange(
        root,
        initialize(),
        request(1, "tools/call", big),
        request(2, "tools/call", small),
        request(3, "tools/call", {**small, "_meta": {"progressToken": "p"}}),
    )
    answered = by_id(answers)
    assert answered[1]["result"]["content"][0]["text"] == ("x" * 99 + "\n") * 2
    assert not answered[2]["result"].get("isError") and answered[2]["result"] == answered[3]["result"]


@pytest.mark.anyio
async def test_a_line_past_the_limit_is_dropped_to_its_end_and_read_as_too_long():
    from fsmcp.serve.wire import TOO_LONG, Lines

    lines = Lines(limit=10)
    lines.data_received(b'{"a": 1}\n' + b"y" * 30)
    assert lines.has_line()
    assert await lines.readline() == b'{"a": 1}\n'
    assert not lines.has_line()
    assert await lines.readline() == TOO_LONG  # 30 bytes and no end yet: dropped, and so is the rest of it
    lines.data_received(b"yyyy\n[1]\n" + b"z" * 12 + b"\n{}")
    assert await lines.readline() == b"[1]\n"
    assert await lines.readline() == TOO_LONG  # a whole line over the limit
    lines.eof_received()
    assert await lines.readline() == b"{}"  # the last line may lack its newline
    assert await lines.readline() is None


class _Transport:
    """A read transport that records whether reading is paused."""

    paused = False

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False


@pytest.mark.anyio
async def test_reading_pauses_past_its_bound_until_no_whole_line_is_left():
    from fsmcp.serve.wire import Lines

    lines, transport = Lines(limit=1000, pause_bytes=20), _Transport()
    lines.connection_made(transport)
    lines.data_received(b'{"a": 1}\n{"b": 2}\n')
    assert not transport.paused  # 18 bytes waiting
    lines.data_received(b'{"c": 3}\n{"d"')
    assert transport.paused  # 31 bytes waiting: the client is held back by its pipe
    assert [await lines.readline() for _ in range(3)] == [b'{"a": 1}\n', b'{"b": 2}\n', b'{"c": 3}\n']
    assert transport.paused  # still paused while whole lines are read

    read: list[bytes | None] = []

    async def read_one() -> None:
        read.append(await lines.readline())

    async with anyio.create_task_group() as group:
        group.start_soon(read_one)
        await anyio.sleep(0.01)
        assert not transport.paused  # nothing whole is left to read: reading goes on
        for piece in (b": 4", b"0" * 30):  # a line longer than the bound is still read whole
            lines.data_received(piece)
            await anyio.sleep(0.01)
            assert not transport.paused
        lines.data_received(b"}\n")
    assert read == [b'{"d": 4' + b"0" * 30 + b"}\n"]


def test_what_orjson_refuses_is_read_and_written_by_the_standard_library(root):
    # An id past 64 bits is JSON all the same; a file name's undecodable byte is written as \xff.
    (root / "caf\udce9.txt").write_bytes(b"x")
    big = 2**70
    answers, _ = exchange(
        root,
        initialize(),
        f'{{"jsonrpc": "2.0", "id": {big}, "method": "ping"}}',
        request(2, "tools/call", {"name": "list_directory", "arguments": {"path": "."}}),
    )
    answered = by_id(answers)
    assert answered[big]["result"] == {}
    assert "caf\\xe9.txt" in answered[2]["result"]["content"][0]["text"]
