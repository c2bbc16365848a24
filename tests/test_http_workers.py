"""``fsmcp serve --transport http --workers N``: one port, N real worker processes, real clients.

Every request here goes over a fresh connection (no keep-alive), so the kernel hands it to any
worker: a session's requests land on workers that do not hold it, and are passed on.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from fsmcp.testing import forked, http_url, pid_in, text_of

TOKEN = "workers-token-0123456789"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


@dataclass
class Served:
    url: str
    process: subprocess.Popen[bytes]
    pid: int
    root: Path
    state: Path
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text()

    def workers(self) -> list[int]:
        """The supervisor's live children: its workers."""
        children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        return sorted(int(c) for c in children)


def serve(tmp_path: Path, workers: int, *args: str) -> Served:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    state = tmp_path / "state"
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            forked("serve", "--transport", "http", "--port", "0", "--workers", str(workers), "--token-file", str(token_file), *args, str(root), pid_file=tmp_path / "server.pid"),
            cwd=tmp_path,
            env={**os.environ, "XDG_STATE_HOME": str(state)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        url = http_url(process, errors)
    except BaseException:
        process.kill()
        process.wait(timeout=30)
        raise
    return Served(url, process, pid_in(tmp_path / "server.pid"), root.resolve(), state, errors)


@pytest.fixture
def four(tmp_path: Path) -> Iterator[Served]:
    served = serve(tmp_path, 4)
    try:
        yield served
    finally:
        served.process.terminate()
        served.process.wait(timeout=60)


def fresh_connections() -> httpx2.AsyncClient:
    """A client that opens a new connection for every request (any worker may take it)."""
    limits = httpx2.Limits(max_keepalive_connections=0)
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120, limits=limits)


@asynccontextmanager
async def session(served: Served) -> AsyncIterator[Client]:
    http = fresh_connections()
    # The handshake eras: a session, held by one worker (a 2026-07-28 client keeps no session).
    async with http, Client(streamable_http_client(served.url, http_client=http), mode="legacy") as client:
        yield client


def until(condition, what: str, timeout: float = 120) -> None:
    for _ in range(int(timeout / 0.05)):  # by count: a loaded machine takes longer, never forever
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def opened_by(served: Served) -> set[str]:
    """The workers that opened sessions, by the prefix each puts on its session ids."""
    found = set()
    for _ in range(40):
        response = httpx2.post(served.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
        assert response.status_code == 200, response.text
        found.add(response.headers["mcp-session-id"].partition("-")[0])
    return found


# -- sessions across workers ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_sessions_requests_are_served_whichever_worker_takes_them(four):
    (four.root / "one").mkdir()
    (four.root / "one" / "here.txt").write_text("in one\n")
    (four.root / "two").mkdir()
    (four.root / "two" / "here.txt").write_text("in two\n")
    assert len(opened_by(four)) > 1  # the sessions below are held by several workers

    async def use(n: int) -> list[str]:
        place = "one" if n % 2 else "two"
        async with session(four) as client:
            await client.call_tool("set_workspace", {"path": str(four.root / place)})
            # The workspace is the session's own: every read, on whichever worker, resolves in it.
            return [text_of(await client.call_tool("read_file", {"path": "here.txt"})) for _ in range(6)]

    results = await asyncio.gather(*(use(n) for n in range(8)))
    for n, texts in enumerate(results):
        assert [t.rstrip() for t in texts] == [f"in {'one' if n % 2 else 'two'}"] * 6


def test_an_unknown_session_is_404_on_every_worker(four):
    for prefix in ("0", "1", "2", "3", "9", ""):
        headers = {**MCP_HEADERS, "Mcp-Session-Id": f"{prefix}-{'0' * 32}", "MCP-Protocol-Version": "2025-11-25"}
        response = httpx2.post(four.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=60)
        assert response.status_code == 404, (prefix, response.text)


def test_a_forwarded_request_still_needs_the_token(four):
    opened = httpx2.post(four.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
    session_id = opened.headers["mcp-session-id"]
    headers = {**MCP_HEADERS, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25", "Authorization": "Bearer wrong"}
    for _ in range(12):  # fresh connections: most land on another worker than the session's
        response = httpx2.post(four.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=60)
        assert response.status_code == 401


# -- shared state: 200 changes to one file through 4 workers ---------------------------------------


def journal_changes(state: Path) -> list[dict]:
    changes = state / "fsmcp" / "journal" / "changes"
    return [json.loads((entry / "meta.json").read_text()) for entry in changes.iterdir() if (entry / "meta.json").exists()]


def audit_lines(tmp_path: Path) -> list[dict]:
    lines = []
    for log in sorted(tmp_path.glob("audit.log*")):
        for raw in log.read_bytes().split(b"\n")[:-1]:
            lines.append(json.loads(raw))  # a line two writes interleaved, or cut, fails here
        assert log.read_bytes().endswith(b"\n")
    return lines


@pytest.mark.anyio
async def test_200_concurrent_edits_and_appends_on_one_file_through_4_workers(tmp_path):
    # A small audit log, rotated some 20 times meanwhile by whichever workers fill it.
    served = serve(tmp_path, 4, "--audit-log", str(tmp_path / "audit.log"), "--config", str(write_config(tmp_path)))
    target = served.root / "shared.txt"
    target.write_text("".join(f"slot-{i:03d}\n" for i in range(100)))
    calls = {"edit_file": 0, "append_file": 0}
    conflicts = 0

    async def change(client: Client, n: int) -> None:
        nonlocal conflicts
        if n % 2:
            tool, args = "edit_file", {"path": str(target), "edits": [{"oldText": f"slot-{n // 2:03d}\n", "newText": f"done-{n // 2:03d}\n"}]}
        else:
            tool, args = "append_file", {"path": str(target), "content": f"appended-{n // 2:03d}\n"}
        for _ in range(100):
            calls[tool] += 1
            result = await client.call_tool(tool, args)
            if not result.is_error:
                return
            # The stale-write guard: another session changed the file since this one saw it; read, retry.
            assert text_of(result).startswith("EDIT_CONFLICT"), text_of(result)
            conflicts += 1
            await client.call_tool("read_file", {"path": str(target), "head": 1})
        raise AssertionError(f"{tool} {n} conflicted 100 times")

    async def one_session(numbers: list[int]) -> None:
        async with session(served) as client:
            await asyncio.gather(*(change(client, n) for n in numbers))

    try:
        await asyncio.gather(*(one_session(list(range(s, 200, 8))) for s in range(8)))
    finally:
        served.process.terminate()
        served.process.wait(timeout=60)
    lines = target.read_text().splitlines()
    assert sorted(lines[:100]) == [f"done-{i:03d}" for i in range(100)]
    assert sorted(lines[100:]) == [f"appended-{i:03d}" for i in range(100)]
    changes = journal_changes(served.state)
    assert sorted(c["tool"] for c in changes).count("edit_file") == 100
    assert sorted(c["tool"] for c in changes).count("append_file") == 100
    assert len(changes) == 200
    # Each change once: what each appended or edited, by its own record's after-state, is different.
    assert len({json.dumps(c["records"], sort_keys=True) for c in changes}) == 200
    audited = audit_lines(tmp_path)
    assert len(list(tmp_path.glob("audit.log.*"))) >= 2  # rotated, by several processes
    for tool, count in calls.items():
        assert sum(1 for line in audited if line["tool"] == tool) == count, tool
    assert sum(1 for line in audited if line["tool"] in calls and line["outcome"] == "ok") == 200
    assert sum(1 for line in audited if line["outcome"] == "EDIT_CONFLICT") == conflicts


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "fsmcp.toml"
    config.write_text("audit_log_max_bytes = 8192\naudit_log_keep = 1000\n")
    return config


# -- a worker that dies ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_worker_killed_mid_load_is_replaced_and_no_completed_change_is_lost(tmp_path):
    served = serve(tmp_path, 2)
    try:
        until(lambda: len(served.workers()) == 2, "two workers")
        victim = served.workers()[0]
        done: list[str] = []

        async def writer(s: int) -> None:
            # A session whose worker is killed ends (404): its client opens another and goes on.
            n = s
            while n < 120:
                try:
                    async with session(served) as client:
                        while n < 120:
                            name = f"f{n:03d}.txt"
                            result = await client.call_tool("write_file", {"path": str(served.root / name), "content": name})
                            assert not result.is_error, text_of(result)
                            done.append(name)
                            n += 4
                except Exception:  # noqa: BLE001 - the session's worker was killed mid-call
                    continue

        async def killer() -> None:
            while len(done) < 20:
                await asyncio.sleep(0.05)
            os.kill(victim, signal.SIGKILL)

        await asyncio.wait_for(asyncio.gather(killer(), *(writer(s) for s in range(4))), timeout=300)
        until(lambda: len(served.workers()) == 2 and victim not in served.workers(), "the replacement worker")
        assert f"(pid {victim}) was killed by signal 9" in served.log()
        # Every change a client was told was made is there, and in the journal.
        for name in done:
            assert (served.root / name).read_text() == name
        journaled = {Path(c["paths"][0]).name for c in journal_changes(served.state) if c["tool"] == "write_file"}
        assert set(done) <= journaled
        # The replacement serves: enough fresh connections reach both workers.
        assert opened_by(served) == {"0", "1"}
    finally:
        served.process.terminate()
        served.process.wait(timeout=60)
    assert served.process.returncode == 0


def test_sigterm_stops_every_worker_and_the_supervisor_exits_0(tmp_path):
    served = serve(tmp_path, 3)
    until(lambda: len(served.workers()) == 3, "three workers")
    workers = served.workers()
    served.process.terminate()
    assert served.process.wait(timeout=60) == 0
    for pid in workers:
        until(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], f"worker {pid} gone")


def test_a_configuration_error_in_a_worker_exits_2_once(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    (tmp_path / "root").mkdir()
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            forked("serve", "--transport", "http", "--port", "0", "--workers", "3", "--token-file", str(token_file), "--require-workspace", "--disable", "workspace", str(tmp_path / "root")),
            env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
        )
    assert process.wait(timeout=120) == 2
    assert errors.read_text().count("--require-workspace needs the set_workspace tool") == 1, errors.read_text()
    assert "serving" not in errors.read_text()


def test_workers_must_be_a_positive_number(tmp_path):
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            forked("serve", "--transport", "http", "--workers", "0", str(tmp_path)),
            env={**os.environ, "FSMCP_TOKEN": TOKEN}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
        )
    assert process.wait(timeout=120) == 2
    assert "workers must be a whole number of HTTP worker processes from 1 to 256" in errors.read_text()
