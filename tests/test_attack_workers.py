"""Attacks on ``fsmcp serve --transport http --workers N`` (issue 32): private sockets, forged
session ids, the stale-write guard across workers. Real processes, real HTTP."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path

import sys

import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_http_workers import INITIALIZE, MCP_HEADERS, TOKEN, serve, session, until

from fsmcp.testing import text_of


def worker_sockets(served) -> list[str]:
    """The unix sockets the supervisor's workers listen on, from /proc/net/unix."""
    found = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and re.search(r"/\d+\.sock$", parts[7]) and "fsmcp" in parts[7]:
            found.add(parts[7])
    # Keep those whose directory belongs to this supervisor (made after it started, by its pid or its state dir).
    mine = [p for p in found if f"-{served.pid}-" in p or str(served.state) in p or os.path.realpath(str(served.state)) in p]
    return sorted(mine)


@pytest.fixture
def four(tmp_path):
    served = serve(tmp_path, 4)
    try:
        until(lambda: len(served.workers()) == 4, "four workers")
        yield served
    finally:
        served.process.terminate()
        served.process.wait(timeout=60)


def test_worker_sockets_are_in_a_directory_only_this_user_can_enter(four):
    until(lambda: len(worker_sockets(four)) >= 4, "four worker sockets", timeout=60)
    for path in worker_sockets(four):
        directory = os.path.dirname(path)
        mode = os.stat(directory).st_mode
        assert stat.S_IMODE(mode) & 0o077 == 0, (directory, oct(mode))
        assert os.stat(directory).st_uid == os.getuid()


def test_a_worker_socket_reached_directly_without_the_token_is_refused(four):
    until(lambda: len(worker_sockets(four)) >= 4, "four worker sockets", timeout=60)
    opened = httpx2.post(four.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
    session_id = opened.headers["mcp-session-id"]
    no_token = {k: v for k, v in MCP_HEADERS.items() if k != "Authorization"}
    for path in worker_sockets(four):
        transport = httpx2.HTTPTransport(uds=path)
        with httpx2.Client(transport=transport, timeout=60) as client:
            for headers in (no_token, {**no_token, "Authorization": "Bearer wrong"}):
                response = client.post("http://localhost/mcp", json=INITIALIZE, headers=headers)
                assert response.status_code in (401, 403), (path, response.status_code, response.text)
                forged = {**headers, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
                response = client.post("http://localhost/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=forged)
                assert response.status_code in (401, 403), (path, response.status_code, response.text)


def test_a_forged_session_id_naming_a_worker_without_the_token_is_401(four):
    opened = httpx2.post(four.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
    session_id = opened.headers["mcp-session-id"]
    prefix, _, rest = session_id.partition("-")
    no_token = {k: v for k, v in MCP_HEADERS.items() if k != "Authorization"}
    for forged_id in (session_id, *(f"{w}-{rest}" for w in range(4)), f"../{rest}", f"0/../../x-{rest}", f"{prefix}-"):
        headers = {**no_token, "Mcp-Session-Id": forged_id, "MCP-Protocol-Version": "2025-11-25"}
        for _ in range(6):
            response = httpx2.post(four.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=60)
            assert response.status_code == 401, (forged_id, response.status_code, response.text)


def test_a_forged_session_id_with_path_tricks_is_a_clear_404_never_a_hang(four):
    opened = httpx2.post(four.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60)
    rest = opened.headers["mcp-session-id"].partition("-")[2]
    for forged_id in (f"../{rest}", f"0/../../x-{rest}", f"99999999999999999999-{rest}", f"-1-{rest}", f"4-{rest}", "\u00e9-x", "0-" + "a" * 5000):
        headers = {**MCP_HEADERS, "Mcp-Session-Id": forged_id, "MCP-Protocol-Version": "2025-11-25"}
        try:
            response = httpx2.post(four.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=60)
        except UnicodeEncodeError:
            continue
        assert response.status_code in (400, 404), (forged_id[:40], response.status_code, response.text)
    # and the server still serves
    assert httpx2.post(four.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60).status_code == 200


@pytest.mark.anyio
async def test_the_stale_write_guard_holds_across_workers(four):
    target = four.root / "stale.txt"
    target.write_text("alpha\nbeta\n")
    for attempt in range(4):
        async with session(four) as first, session(four) as second:
            assert not (await first.call_tool("read_file", {"path": str(target)})).is_error
            changed = await second.call_tool("edit_file", {"path": str(target), "edits": [{"oldText": "beta\n", "newText": f"beta{attempt}\n"}]})
            assert not changed.is_error, text_of(changed)
            before = target.read_text()
            result = await first.call_tool("edit_file", {"path": str(target), "edits": [{"oldText": "alpha\n", "newText": f"ALPHA{attempt}\n"}]})
            assert result.is_error, f"a stale edit went through: {target.read_text()!r}"
            assert text_of(result).startswith("EDIT_CONFLICT"), text_of(result)
            assert target.read_text() == before
            target.write_text("alpha\nbeta\n")


@pytest.mark.anyio
async def test_undo_of_a_change_another_worker_changed_on_top_is_refused_not_clobbered(four):
    target = four.root / "undo.txt"
    target.write_text("base\n")
    async with session(four) as first, session(four) as second:
        assert not (await first.call_tool("write_file", {"path": str(target), "content": "first\n"})).is_error
        await second.call_tool("read_file", {"path": str(target)})
        changed = await second.call_tool("append_file", {"path": str(target), "content": "second\n"})
        assert not changed.is_error, text_of(changed)
        undone = await first.call_tool("undo_change", {})
        # Undoing first's write would throw away second's append: must be refused, clearly.
        assert target.read_text() == "first\nsecond\n", (target.read_text(), text_of(undone))
        assert undone.is_error, text_of(undone)


@pytest.mark.anyio
async def test_one_change_undone_by_many_sessions_at_once_is_undone_once(four):
    target = four.root / "once.txt"
    target.write_text("before\n")
    async with session(four) as maker:
        assert not (await maker.call_tool("write_file", {"path": str(target), "content": "after\n"})).is_error
        [change] = [c for c in (await maker.call_tool("list_changes", {})).structured_content["changes"] if c["tool"] == "write_file"]

    async def undo() -> bool:
        async with session(four) as client:
            result = await client.call_tool("undo_change", {"id": change["id"]})
            return not result.is_error

    outcomes = await asyncio.gather(*(undo() for _ in range(8)))
    assert outcomes.count(True) == 1, outcomes
    assert target.read_text() == "before\n"


@pytest.mark.anyio
async def test_journal_ids_are_unique_across_workers(four):
    async def writes(s: int) -> None:
        async with session(four) as client:
            for i in range(6):
                r = await client.call_tool("write_file", {"path": str(four.root / f"w{s}-{i}.txt"), "content": f"{s}-{i}\n"})
                assert not r.is_error, text_of(r)

    await asyncio.gather(*(writes(s) for s in range(8)))
    async with session(four) as client:
        changes = (await client.call_tool("list_changes", {"limit": 200} )).structured_content["changes"]
    ids = [c["id"] for c in changes]
    assert len(ids) == len(set(ids)) == 48, ids


def test_slow_clients_holding_connections_to_every_worker_do_not_starve_a_real_request(four):
    import socket as socketlib
    from urllib.parse import urlparse

    where = urlparse(four.url)
    held = []
    try:
        for _ in range(300):
            s = socketlib.create_connection((where.hostname, where.port), timeout=30)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n")  # never finished
            held.append(s)
        response = httpx2.post(four.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=90)
        assert response.status_code == 200, response.text
    finally:
        for s in held:
            s.close()


@pytest.mark.anyio
async def test_sigterm_mid_writes_ends_every_call_and_loses_no_completed_change(tmp_path):
    import json as jsonlib

    served = serve(tmp_path, 3)
    until(lambda: len(served.workers()) == 3, "three workers")
    workers = served.workers()
    done: list[str] = []

    async def writer(s: int) -> None:
        try:
            async with session(served) as client:
                for i in range(200):
                    name = f"t{s}-{i}.txt"
                    r = await client.call_tool("write_file", {"path": str(served.root / name), "content": name})
                    if not r.is_error:
                        done.append(name)
        except BaseException:  # the server going away ends the session: an error, not a hang
            pass

    async def terminate() -> None:
        while len(done) < 20:
            await asyncio.sleep(0.05)
        served.process.terminate()

    await asyncio.wait_for(asyncio.gather(terminate(), *(writer(s) for s in range(6))), timeout=300)
    assert served.process.wait(timeout=60) == 0
    for pid in workers:
        until(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], f"worker {pid} gone")
    for name in done:
        assert (served.root / name).read_text() == name
    changes = served.state / "fsmcp" / "journal" / "changes"
    metas = [jsonlib.loads((e / "meta.json").read_text()) for e in changes.iterdir() if (e / "meta.json").exists()]
    assert len(metas) >= len(done), (len(metas), len(done))


@pytest.mark.parametrize("era", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_session_of_every_era_is_served_by_every_worker(four, era):
    import json as jsonlib

    hello = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": era}}
    opened = httpx2.post(four.url, json=hello, headers=MCP_HEADERS, timeout=60)
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    headers = {**MCP_HEADERS, "Mcp-Session-Id": sid}
    if era != "2024-11-05" and era != "2025-03-26":
        headers["MCP-Protocol-Version"] = era
    r = httpx2.post(four.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=60)
    assert r.status_code in (200, 202), r.text
    (four.root / "era.txt").write_text("era\n")
    for n in range(12):  # fresh connections: the kernel spreads them over the workers
        r = httpx2.post(four.url, json={"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": str(four.root / "era.txt")}}}, headers=headers, timeout=60)
        assert r.status_code == 200, (n, r.status_code, r.text)
        body = r.text
        if "text/event-stream" in r.headers.get("content-type", ""):
            body = "".join(line[5:] for line in body.splitlines() if line.startswith("data:"))
        message = jsonlib.loads(body)
        assert message["id"] == 10 + n and "era" in jsonlib.dumps(message["result"]), message


@pytest.mark.anyio
async def test_kill_9_workers_again_and_again_during_edits_leaves_file_and_journal_whole(tmp_path):
    import json as jsonlib
    import signal

    served = serve(tmp_path, 3)
    until(lambda: len(served.workers()) == 3, "three workers")
    target = served.root / "k.txt"
    target.write_text("")
    done: list[str] = []
    stop = False

    async def appender(s: int) -> None:
        i = 0
        while not stop:
            try:
                async with session(served) as client:
                    while not stop:
                        line = f"a{s}-{i}\n"
                        i += 1
                        r = await client.call_tool("append_file", {"path": str(target), "content": line})
                        if not r.is_error:
                            done.append(line)
                        else:
                            assert text_of(r).startswith("EDIT_CONFLICT"), text_of(r)
            except AssertionError:
                raise
            except BaseException:
                await asyncio.sleep(0.1)  # its worker died: a new session

    async def killer() -> None:
        for _ in range(6):
            while True:
                before = len(done)
                await asyncio.sleep(0.5)
                if len(done) > before:
                    break
            victims = served.workers()
            if victims:
                os.kill(victims[_ % len(victims)], signal.SIGKILL)
            await asyncio.sleep(1)

    async def run() -> None:
        nonlocal stop
        tasks = [asyncio.create_task(appender(s)) for s in range(5)]
        await killer()
        stop = True
        await asyncio.gather(*tasks)

    try:
        await asyncio.wait_for(run(), timeout=400)
        until(lambda: len(served.workers()) == 3, "three workers again")
        assert httpx2.post(served.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=60).status_code == 200
    finally:
        served.process.terminate()
        served.process.wait(timeout=60)
    lines = target.read_text().splitlines(keepends=True)
    assert len(lines) == len(set(lines)), "a line appended twice"
    assert set(done) <= set(lines), set(done) - set(lines)
    changes = served.state / "fsmcp" / "journal" / "changes"
    metas = [jsonlib.loads((e / "meta.json").read_text()) for e in changes.iterdir() if (e / "meta.json").exists()]
    # A call cut by the kill is recovered into an entry marked "interrupted" (it may have changed nothing).
    whole = [m for m in metas if not m.get("interrupted")]
    assert len(whole) >= len(done)
    assert len(whole) <= len(lines), (len(whole), len(lines))  # no finished change journaled that is not in the file
