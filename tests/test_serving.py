"""Bounded serving and a clean end, against the real server on its real transports.

stdio is spoken in raw JSON-RPC lines (a client that misbehaves: nesting, a flood it never
reads, a signal mid-call); HTTP through real sockets. Nothing here depends on the machine's
speed: loops are bounded by count, and limits are generous ceilings.
"""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from fsmcp.serve.stdio import MAX_IN_FLIGHT
from fsmcp.testing import RawStdio, forked, http_url, pid_in, text_of

STRACE = shutil.which("strace")
TIMEOUT = 60
TOKEN = "correct-horse-battery-staple-42"
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}



def temp_files(top: Path) -> list[Path]:
    return [p for p in top.rglob("*") if ".fsmcp-tmp" in p.name]


def nested_line(depth: int, id_: int = 7) -> bytes:
    return b'{"jsonrpc": "2.0", "id": %d, "method": "ping", "params": {"a": ' % id_ + b"[" * depth + b"]" * depth + b"}}\n"


# -- nesting ----------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1_024, 100_000])
def test_a_line_nested_deeper_than_the_limit_is_a_parse_error_and_the_server_serves_on(root, depth):
    raw = RawStdio(str(root))
    raw.initialize()
    raw.send(b'{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"a": ' + b'{"b": [' * 31 + b']}' * 31 + b"}}\n")
    raw.send(nested_line(depth))
    raw.call(8, "read_file", {"path": "a.txt"})
    assert raw.answer(6) == {"jsonrpc": "2.0", "id": 6, "result": {}}  # 64 deep in all: served
    refused = raw.answer(None)["error"]
    assert refused["code"] == -32700 and "nested" in refused["message"] and "64" in refused["message"], refused
    assert raw.text(8) == (False, "alpha\n")
    rc, stderr = raw.close()
    assert rc == 0 and "Traceback" not in stderr, stderr[-2000:]


# -- SIGTERM and SIGINT over stdio ------------------------------------------------------------


def _pending(journal: Path) -> list[Path]:
    return [p for p in (journal / "pending").glob("*")] if (journal / "pending").is_dir() else []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_write_lets_the_write_finish_then_exits_0_leaving_nothing(tmp_path, signum):
    """The signal comes at the write's rename (strace injects it before the call runs): the write
    is in flight, its 10 MB temporary file complete beside its target."""
    assert STRACE, "strace is needed to send the signal at a chosen step of the write"
    root, journal = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    content = "0123456789abcde\n" * (10 * 1024 * 1024 // 16)
    name = {signal.SIGTERM: "TERM", signal.SIGINT: "INT"}[signum]
    # The count is a thread's: the first renameat of the thread that writes is the write's
    # (its temporary file into place); start-up and the journal rename by path (rename).
    trace = tmp_path / "strace.txt"
    raw = RawStdio(
        argv=[STRACE, "-f", "-qq", "-o", str(trace), "--seccomp-bpf", "-e", "trace=renameat",
              "-e", f"inject=renameat:signal={name}:when=1",
              sys.executable, "-m", "fsmcp", "serve", str(root), "--journal", str(journal)],
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )  # fmt: skip
    raw.initialize()
    raw.call(1, "write_file", {"path": "big.txt", "content": content})
    is_error, text = raw.text(1)
    assert not is_error and "Successfully wrote" in text, text
    rc = raw.proc.wait(TIMEOUT)
    stderr = raw.stderr()
    assert rc == 0, (rc, stderr[-2000:])
    assert f"--- SIG{name} " in trace.read_text() and ".big.txt." in trace.read_text(), trace.read_text()[-2000:]
    assert (root / "big.txt").read_text() == content
    assert temp_files(root) == [] and _pending(journal) == []
    assert "Traceback" not in stderr, stderr[-2000:]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_call_that_never_ends_exits_0_within_the_bound(root, signum):
    with open(root / "sparse.bin", "wb") as fh:
        fh.truncate(1024**4)  # word_count would read a tebibyte of holes
    raw = RawStdio(str(root))
    raw.initialize()
    raw.call(1, "word_count", {"path": "sparse.bin"}, progress=True)
    assert raw.progressed.wait(TIMEOUT), "word_count reported no progress"
    raw.proc.send_signal(signum)
    rc = raw.proc.wait(TIMEOUT)  # the grace and the exit bound, with a loaded machine's margin
    stderr = raw.stderr()
    assert rc == 0, (rc, stderr[-2000:])
    assert "Traceback" not in stderr, stderr[-2000:]
    assert temp_files(root) == []


# -- a client that sends and never reads ------------------------------------------------------


def _status(pid: int) -> tuple[int, int]:
    """The process's resident memory in bytes and its thread count."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["Threads"])


def _cpu_ticks(pid: int) -> int:
    """The user and system time of the process and of its children reaped so far, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15])  # its own and its reaped children's (ripgrep)


def test_a_client_that_floods_calls_and_never_reads_holds_the_server_s_memory_bounded(tmp_path):
    """100,000 pipelined searches (13 MB of requests), not one answer read: the server stops
    reading once its calls in flight wait to be answered, and the client's pipe holds it back."""
    root = tmp_path / "root"
    root.mkdir()
    for i in range(20):
        (root / f"f{i}.txt").write_text("needle in a haystack\n" * 200)
    pid_file = tmp_path / "server.pid"
    proc = subprocess.Popen(forked("serve", str(root), pid_file=pid_file), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = pid_in(pid_file)  # the server's own (proc runs the shim that stands for it)
    proc.stdin.write(json.dumps({**INITIALIZE, "id": 0}).encode() + b"\n")  # type: ignore[union-attr]
    proc.stdin.flush()  # type: ignore[union-attr]
    assert b'"result"' in proc.stdout.readline()  # type: ignore[union-attr]
    before, _ = _status(pid)
    sent = [0]

    def flood() -> None:
        call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "grep_files", "arguments": {"regex": "needle", "directory": "."}}}
        try:
            for i in range(1, CALLS + 1):
                proc.stdin.write(json.dumps({**call, "id": i}).encode() + b"\n")  # type: ignore[union-attr]
                sent[0] = i
            proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass

    threading.Thread(target=flood, daemon=True).start()
    peak, threads = before, 0
    last, still = None, 0
    try:
        for _ in range(40):  # bounded by count: 20 s of samples
            time.sleep(0.5)
            rss, count = _status(pid)
            peak, threads = max(peak, rss), max(threads, count)
            if peak - before > 100 * 1024**2:
                break
            # Held back and at rest: the client blocked on its pipe, and the server neither
            # reading, working nor growing for 3 s (6 samples) stays so, its answers unread.
            # A server that takes every request in lets the client send all; it is sampled to the end.
            now = (sent[0], rss, _cpu_ticks(pid))
            still = still + 1 if now == last and sent[0] < CALLS else 0
            last = now
            if still == 6:
                break
        assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()
    growth = (peak - before) / 1024**2
    print(f"RSS {before / 1024**2:.0f} MB before, peak {peak / 1024**2:.0f} MB; {threads} threads at most; {sent[0]:,} of {CALLS:,} calls sent")
    assert growth < 100, f"RSS grew {growth:.0f} MB ({before / 1024**2:.0f} MB before) with {sent[0]:,} calls sent, {threads} threads"
    assert sent[0] < CALLS, "the client was never held back"
    # A call in flight holds at most a worker thread and the thread asyncio watches its ripgrep with.
    assert threads < 2 * MAX_IN_FLIGHT + 20, threads


CALLS = 100_000


# -- HTTP -------------------------------------------------------------------------------------


def _http_server(tmp_path: Path, *extra: str, config: str = "", nofile: int | None = None, wrapper: tuple[str, ...] = ()) -> tuple[subprocess.Popen[bytes], Path, str, Path]:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("alpha\n")
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    conf = tmp_path / "fsmcp.toml"
    conf.write_text(config)
    errors = tmp_path / "stderr.txt"

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    # One process: these are its own limits and signals (tests/test_http_workers.py has several).
    args = ["serve", "--transport", "http", "--port", "0", "--workers", "1", "--token-file", str(token), "--config", str(conf), str(root), *extra]
    # A limit or a wrapper is the process's own: those start it as a new interpreter.
    argv = [*wrapper, sys.executable, "-m", "fsmcp", *args] if nofile is not None or wrapper else forked(*args)
    with errors.open("wb") as sink:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink, preexec_fn=limit)
    return proc, errors, http_url(proc, errors), root


def _post(url: str, body: bytes, session: str | None = None) -> httpx2.Response:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", **({"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"} if session else {})}
    return httpx2.post(url, content=body, headers=headers, timeout=60)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("depth", [1_024, 5_000, 100_000])
def test_http_refuses_deep_nesting_with_a_parse_error_and_serves_on(tmp_path, depth):
    proc, errors, url, _ = _http_server(tmp_path)
    try:
        opened = _post(url, json.dumps(INITIALIZE).encode())
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        refused = _post(url, nested_line(depth).strip(), session)
        assert refused.status_code == 400, (refused.status_code, refused.text[:500])
        error = refused.json()["error"]
        assert error["code"] == -32700 and "nested" in error["message"], error
        ping = _post(url, b'{"jsonrpc": "2.0", "id": 8, "method": "ping"}', session)
        assert ping.status_code == 200, ping.text
        assert proc.poll() is None
    finally:
        _stop(proc)
    assert "Traceback" not in errors.read_text(), errors.read_text()[-2000:]


async def _session_calls(url: str, calls: int, outcomes: list[str]) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    try:
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            for _ in range(calls):
                try:
                    result = await client.call_tool("read_file", {"path": "a.txt"})
                except Exception as exc:  # a refusal reaches the client as an MCP error
                    outcomes.append(f"error: {exc}")
                    continue
                outcomes.append("served" if text_of(result) == "alpha\n" else f"wrong: {text_of(result)[:200]}")
    except Exception as exc:  # a session refused at its start or midway
        outcomes.append(f"session: {exc!r}"[:300])


@pytest.mark.anyio
async def test_http_with_64_descriptors_and_30_sessions_serves_or_refuses_clearly_with_little_logging(tmp_path):
    proc, errors, url, _ = _http_server(tmp_path, nofile=64)
    outcomes: list[str] = []
    try:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for _ in range(30):
                    group.start_soon(_session_calls, url, 10, outcomes)
        after: list[str] = []
        with anyio.fail_after(60):
            await _session_calls(url, 1, after)
        assert after == ["served"], after  # the server serves again once the burst is over
    finally:
        _stop(proc)
    served = outcomes.count("served")
    failures = [o for o in outcomes if o != "served"]
    log = errors.read_text()
    assert len(log) < 100_000, f"{len(log):,} bytes of stderr; {served} served; {log[-2000:]}"
    assert "Too many open files" not in log and "Traceback" not in log, log[-2000:]
    print(f"{served} calls served, {len(failures)} refusals (a call's or a whole session's), {len(log):,} bytes of stderr")
    # How many of the 30 sessions get their calls in depends on how their starts interleave
    # (each holds a request open for its event stream); none may fail but by a clear refusal.
    assert all("most requests at once" in f for f in failures), failures[:5]


def test_http_takes_a_write_of_5_million_characters_as_stdio_does(tmp_path):
    proc, errors, url, root = _http_server(tmp_path)
    try:
        opened = _post(url, json.dumps(INITIALIZE).encode())
        session = opened.headers["mcp-session-id"]
        content = "x" * 5_000_000
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "big.txt", "content": content}}}
        response = _post(url, json.dumps(call).encode(), session)
        assert response.status_code == 200, (response.status_code, response.text[:500])
        assert (root / "big.txt").read_text() == content
    finally:
        _stop(proc)


def test_an_http_body_past_the_limit_is_refused_saying_the_limit_and_what_to_do(tmp_path):
    proc, errors, url, root = _http_server(tmp_path, config="max_file_bytes = 1000000\n")
    try:
        opened = _post(url, json.dumps(INITIALIZE).encode())
        session = opened.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "big.txt", "content": "x" * 8_000_000}}}
        response = _post(url, json.dumps(call).encode(), session)
        assert response.status_code == 413, (response.status_code, response.text[:500])
        error = response.json()["error"]
        assert error["code"] == -32600 and f"{6 * 1_000_000 + 2**20:,} bytes" in error["message"] and "append_file" in error["message"], error
        assert response.json()["id"] is None
        ping = _post(url, b'{"jsonrpc": "2.0", "id": 8, "method": "ping"}', session)
        assert ping.status_code == 200, ping.text
    finally:
        _stop(proc)
    assert not (root / "big.txt").exists()


@pytest.mark.parametrize("kind", ["control characters", "surrogate pairs"])
def test_http_takes_a_file_of_max_file_bytes_whatever_its_json_escapes_cost(tmp_path, kind):
    """JSON text costs up to 6 bytes a byte (``\\u0001``) and 12 for 4 (a surrogate pair, 3x)."""
    proc, errors, url, root = _http_server(tmp_path, config="max_file_bytes = 1000000\n")
    content = "\x01" * 1_000_000 if kind == "control characters" else "\U0001f600" * 250_000
    try:
        opened = _post(url, json.dumps(INITIALIZE).encode())
        session = opened.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "big.txt", "content": content}}}
        body = json.dumps(call, ensure_ascii=True).encode()
        response = _post(url, body, session)
        assert response.status_code == 200, (len(body), response.status_code, response.text[:500])
        assert (root / "big.txt").read_text() == content
    finally:
        _stop(proc)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_http_idle_ends_on_a_signal_with_exit_0(tmp_path, signum):
    proc, errors, url, _ = _http_server(tmp_path)
    try:
        assert _post(url, json.dumps(INITIALIZE).encode()).status_code == 200
        proc.send_signal(signum)
        rc = proc.wait(TIMEOUT)
    finally:
        _stop(proc)
    assert rc == 0, (rc, errors.read_text()[-2000:])
    assert "Traceback" not in errors.read_text(), errors.read_text()[-2000:]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_http_a_signal_mid_write_lets_the_write_finish_and_answer_then_exits_0(tmp_path, signum):
    """As over stdio: strace sends the signal at the write's rename, its temporary file complete,
    and holds the rename 2 s (within the 5 s grace; an event stream was cut 0.5 s after a signal)."""
    assert STRACE, "strace is needed to send the signal at a chosen step of the write"
    name = {signal.SIGTERM: "TERM", signal.SIGINT: "INT"}[signum]
    trace = tmp_path / "strace.txt"
    wrapper = (STRACE, "-f", "-qq", "-o", str(trace), "--seccomp-bpf", "-e", "trace=renameat",
               "-e", f"inject=renameat:signal={name}:delay_exit=2000000:when=1")  # fmt: skip
    proc, errors, url, root = _http_server(tmp_path, "--journal", str(tmp_path / "journal"), wrapper=wrapper)
    content = "0123456789abcde\n" * (10 * 1024 * 1024 // 16)
    try:
        opened = _post(url, json.dumps(INITIALIZE).encode())
        session = opened.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "big.txt", "content": content}}}
        response = _post(url, json.dumps(call).encode(), session)
        rc = proc.wait(TIMEOUT)
    finally:
        _stop(proc)
    stderr = errors.read_text()
    assert response.status_code == 200 and "Successfully wrote" in response.text, (response.status_code, response.text[:500], stderr[-2000:])
    assert rc == 0, (rc, stderr[-2000:])
    assert f"--- SIG{name} " in trace.read_text() and ".big.txt." in trace.read_text(), trace.read_text()[-2000:]
    assert (root / "big.txt").read_text() == content and temp_files(root) == []
    assert "Traceback" not in stderr and "without completing response" not in stderr, stderr[-2000:]


# -- the longest message over stdio -----------------------------------------------------------


def test_stdio_drops_a_line_past_the_largest_write_as_json_unread_saying_the_limit(tmp_path):
    """The longest line is what a file of max_file_bytes takes as JSON (6 bytes a byte) and 1 MiB:
    a longer one is answered with a parse error that says the limit, and never held whole."""
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "fsmcp.toml").write_text("max_file_bytes = 1000000\n")
    # A new interpreter, not forked: the peak memory measured is the server's alone.
    raw = RawStdio(argv=[sys.executable, "-m", "fsmcp", "serve", str(root), "--config", str(tmp_path / "fsmcp.toml")], env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    raw.initialize()
    limit = 6 * 1_000_000 + 2**20
    largest = {"path": "big.txt", "content": "\x01" * 1_000_000}
    raw.call(2, "write_file", largest)  # ensure_ascii: 6,000,000 bytes of escapes, accepted
    assert raw.text(2)[0] is False, raw.text(2)
    zeros = 40 * 1024 * 1024 // 2
    raw.send(b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"a": [' + b"0," * (zeros - 1) + b"0]}}\n")
    raw.request(10, "ping")
    refused = raw.answer(None)["error"]
    assert refused["code"] == -32700 and f"{limit:,} bytes" in refused["message"] and "append_file" in refused["message"], refused
    assert raw.answer(10) == {"jsonrpc": "2.0", "id": 10, "result": {}}
    peak = int(dict(line.split(":", 1) for line in Path(f"/proc/{raw.pid}/status").read_text().splitlines())["VmHWM"].split()[0]) * 1024
    rc, stderr = raw.close()
    assert rc == 0 and "Traceback" not in stderr, stderr[-2000:]
    assert (root / "big.txt").read_bytes() == b"\x01" * 1_000_000
    print(f"peak RSS {peak / 1024**2:.0f} MB with a {limit:,}-byte limit")
    assert peak < 400 * 1024**2, f"peak RSS {peak / 1024**2:.0f} MB: the 40 MB line was held"


# -- HTTP sessions ----------------------------------------------------------------------------


def _open_session(client: httpx2.Client, url: str) -> httpx2.Response:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    return client.post(url, content=json.dumps(INITIALIZE).encode(), headers=headers)


def test_http_sessions_never_deleted_stop_at_the_default_cap_of_256(tmp_path):
    """A client that opens sessions and never deletes them (each about 41 kB, idle for 30 minutes
    before it expires) is refused past the cap, the server's memory bounded with it."""
    proc, errors, url, _ = _http_server(tmp_path)
    try:
        with httpx2.Client(timeout=60) as client:
            opened = [_open_session(client, url).status_code for _ in range(256)]
            assert opened == [200] * 256, opened
            refused = [_open_session(client, url) for _ in range(20)]
        assert [r.status_code for r in refused] == [503] * 20, [(r.status_code, r.text[:200]) for r in refused[:3]]
        error = refused[0].json()["error"]
        assert "256" in error["message"] and "max_sessions" in error["message"] and "DELETE" in error["message"], error
    finally:
        _stop(proc)
    log = errors.read_text()
    assert log.count("refusing new sessions") == 1 and "Refusing" not in log and "Traceback" not in log, log[-2000:]  # one line for the burst


def test_http_a_session_deleted_makes_room_under_max_sessions(tmp_path):
    proc, errors, url, _ = _http_server(tmp_path, config="max_sessions = 3\n")
    try:
        with httpx2.Client(timeout=60) as client:
            sessions = [_open_session(client, url).headers["mcp-session-id"] for _ in range(3)]
            refused = _open_session(client, url)
            assert refused.status_code == 503 and "(3" in refused.json()["error"]["message"], refused.text
            headers = {"Authorization": f"Bearer {TOKEN}", "Mcp-Session-Id": sessions[0], "Mcp-Protocol-Version": "2025-11-25"}
            assert client.delete(url, headers=headers).status_code == 200
            again = _open_session(client, url)
            assert again.status_code == 200, again.text
    finally:
        _stop(proc)
