"""A journal shared by sessions: ``undo_change`` without an id takes back the caller's own change.

Two real stdio servers over one journal directory (each through the SDK's client), and two
sessions of one real HTTP server: whatever the transport, B's ``undo_change {}`` never takes
back A's change, and A's never takes back B's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from fsmcp.testing import ToolCalls, forked, http_url, serve_stdio, text_of
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKEN = "session-undo-token-0123456789"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a as it was\n")
    (root / "b.txt").write_text("b as it was\n")
    return root.resolve()


@pytest.fixture
def stdio(tree: Path, tmp_path: Path):
    """``sessions(n)``: n stdio servers, each a process of its own, over ``tree`` and one journal."""

    @asynccontextmanager
    async def sessions() -> AsyncIterator[tuple[ToolCalls, ToolCalls]]:
        args = (str(tree), "--journal", str(tmp_path / "journal"))
        async with serve_stdio(*args) as a, serve_stdio(*args) as b:
            yield ToolCalls(a), ToolCalls(b)

    return sessions


@pytest.fixture
def http(tree: Path, tmp_path: Path) -> Iterator:
    """``sessions()``: two HTTP sessions of one server process over ``tree``."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            [*forked("serve", "--transport", "http", "--port", "0", str(tree)),
             "--token-file", str(token_file), "--journal", str(tmp_path / "journal")],
            cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
    try:
        url = http_url(process, errors)

        @asynccontextmanager
        async def one() -> AsyncIterator[ToolCalls]:
            client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
            # Sessions of the handshake era: a 2026-07-28 client has none (each request stands alone).
            async with client, Client(streamable_http_client(url, http_client=client), mode="legacy") as session:
                yield ToolCalls(session)

        @asynccontextmanager
        async def sessions() -> AsyncIterator[tuple[ToolCalls, ToolCalls]]:
            async with one() as a, one() as b:
                yield a, b

        yield sessions
    finally:
        process.terminate()
        process.wait(timeout=30)


TRANSPORTS = ["stdio", "http"]


@pytest.fixture(params=TRANSPORTS)
def sessions(request):
    return request.getfixturevalue(request.param)


async def _changes(s: ToolCalls) -> list[dict]:
    result = await s.client.call_tool("list_changes", {})
    assert not result.is_error, text_of(result)
    return result.structured_content["changes"]


@pytest.mark.anyio
async def test_undo_without_an_id_takes_back_the_callers_change_not_a_newer_one_of_another_session(sessions, tree: Path):
    async with sessions() as (a, b):
        await a.ok("write_file", path="a.txt", content="written by A\n")
        await b.ok("write_file", path="b.txt", content="written by B\n")
        [of_b, of_a] = await _changes(a)
        text = await a.ok("undo_change")
        assert f"Change {of_a['id']} (write_file" in text, text
        assert (tree / "a.txt").read_text() == "a as it was\n"
        assert (tree / "b.txt").read_text() == "written by B\n"
        # And the other way round: B's own change is B's to take back.
        text = await b.ok("undo_change")
        assert f"Change {of_b['id']} (write_file" in text, text
        assert (tree / "b.txt").read_text() == "b as it was\n"


@pytest.mark.anyio
async def test_undo_without_an_id_never_overwrites_another_sessions_newer_write_to_the_same_file(sessions, tree: Path):
    async with sessions() as (a, b):
        await a.ok("write_file", path="a.txt", content="written by A\n")
        await b.ok("write_file", path="a.txt", content="written by B\n")
        await a.fail("undo_change", "EDIT_CONFLICT")  # A's change is the target, and B wrote over it since
        assert (tree / "a.txt").read_text() == "written by B\n"


@pytest.mark.anyio
async def test_a_session_with_no_change_of_its_own_is_told_so_and_undoes_another_only_by_id(sessions, tree: Path):
    async with sessions() as (a, b):
        await a.ok("write_file", path="a.txt", content="written by A\n")
        text = await b.fail("undo_change", "NOT_FOUND")
        assert "this session" in text and "id" in text, text
        assert (tree / "a.txt").read_text() == "written by A\n"
        [seen_by_b] = await _changes(b)
        [seen_by_a] = await _changes(a)
        assert seen_by_b["id"] == seen_by_a["id"]
        assert seen_by_b["thisSession"] is False and seen_by_a["thisSession"] is True
        assert "this session" not in await b.ok("list_changes")
        assert "this session" in await a.ok("list_changes")
        await b.ok("undo_change", id=seen_by_b["id"])
        assert (tree / "a.txt").read_text() == "a as it was\n"
        # B's undo is B's change: undoing it by id from A puts A's write back.
        [undo, _] = await _changes(a)
        assert undo["undoes"] == seen_by_a["id"] and not undo["thisSession"]
        await a.ok("undo_change", id=undo["id"])
        assert (tree / "a.txt").read_text() == "written by A\n"


def _meta(journal: Path) -> Path:
    [entry] = (journal / "changes").iterdir()
    return entry / "meta.json"


@pytest.mark.anyio
async def test_a_change_kept_before_sessions_were_recorded_is_no_sessions_own(server, root: Path, state: Path):
    async with server() as s:
        await s.ok("write_file", path="a.txt", content="v2")
        meta = json.loads(_meta(state).read_text())
        del meta["session"]  # as a journal written before changes recorded their session
        _meta(state).write_text(json.dumps(meta))
        [change] = await _changes(s)
        assert change["thisSession"] is False
        await s.fail("undo_change", "NOT_FOUND")
        assert (root / "a.txt").read_text() == "v2"
        await s.ok("undo_change", id=change["id"])
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"


@pytest.mark.anyio
@pytest.mark.parametrize("damaged", [None, 7, "", "LOCAL", "0123456789abcdef0", "0123456789abcdeF", ["0123456789abcdef"], "../" * 8])
async def test_a_change_whose_session_is_damaged_is_left_out(server, root: Path, state: Path, damaged):
    async with server() as s:
        await s.ok("write_file", path="a.txt", content="v2")
        meta = json.loads(_meta(state).read_text())
        assert re.fullmatch(r"[0-9a-f]{16}", meta["session"])
        meta["session"] = damaged
        _meta(state).write_text(json.dumps(meta))
        assert await _changes(s) == []
        await s.fail("undo_change", "NOT_FOUND")
        error = await s.fail("undo_change", "INTERNAL_ERROR", id=1)
        assert "change 1 is damaged: its session is not a session's id; nothing was restored" in error
    assert (root / "a.txt").read_text() == "v2"


ROUNDS = 60


@pytest.mark.anyio
async def test_sessions_writing_and_undoing_at_once_never_take_back_each_others_changes(sessions, tree: Path):
    """Each round A writes while B writes, then A undoes while B writes again: A's undo must
    take back A's write, whichever of the calls the server runs first."""
    leaks = []
    outcomes: dict[str, tuple[bool, str]] = {}

    async def run(key: str, s: ToolCalls, tool: str, args: dict) -> None:
        outcomes[key] = await s.call(tool, **args)

    async with sessions() as (a, b):
        for i in range(ROUNDS):
            async with anyio.create_task_group() as group:
                group.start_soon(run, "a", a, "write_file", {"path": "a.txt", "content": f"A {i}\n"})
                group.start_soon(run, "b", b, "write_file", {"path": "b.txt", "content": f"B {i}\n"})
            async with anyio.create_task_group() as group:
                group.start_soon(run, "undo", a, "undo_change", {})
                group.start_soon(run, "b", b, "write_file", {"path": "b.txt", "content": f"B {i} again\n"})
            failed, text = outcomes["undo"]
            a_back = (tree / "a.txt").read_text() == "a as it was\n"
            b_kept = (tree / "b.txt").read_text() == f"B {i} again\n"
            if failed or str(tree / "a.txt") not in text or not a_back or not b_kept:
                leaks.append((i, text))
    assert leaks == [], f"{len(leaks)} of {ROUNDS} rounds A's undo did not take back A's own write alone; first: {leaks[0]}"
