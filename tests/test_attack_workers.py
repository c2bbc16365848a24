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
