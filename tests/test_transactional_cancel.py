"""A cancelled transactional batch is all or nothing: every file as before, and the journal says so.

The stdio server cancels a call with a plain asyncio cancel, which no anyio shield stops: the
step under way is abandoned in its worker thread. A hook holds that step (the fourth write)
until the cancellation has reached it, and then until the batch's rollback has put the first
file back, or a bounded while when the rollback rightly waits for the step: the abandoned write
then lands after a rollback that did not wait, every time, not by chance.

Over HTTP the SDK cancels through an anyio scope, which the batch's shield holds off until the
step has returned. The real server, over stdio and over HTTP, is cancelled once a batch's
fourth file exists, as the attack did: a race, so these two find the old fault only by chance.
"""

from __future__ import annotations

import os
import subprocess
import threading
import types
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from fsmcp import hookimpl
from fsmcp.testing import ToolCalls, cancel_when, connect, forked, host_for, http_url, serve_stdio

FILES = 10
HELD = 3
ROUNDS = 2000
"""Waits of 10 ms, at most, for what must happen: a bound by count, never a time to beat."""
ROLLBACK_ROUNDS = 50
"""Waits of 10 ms for the first file to be put back while the step is held: a rollback that does
not wait for the step does it in far less; one that waits (the right one) never does meanwhile."""


def old_files() -> dict[str, str | None]:
    """Even files exist with old bytes, odd ones do not exist (the held one among them)."""
    return {f"f{i:03}": (f"old {i}\n" * 50 if i % 2 == 0 else None) for i in range(FILES)}


def holder(root: Path, first_old: str) -> tuple[types.ModuleType, threading.Event, threading.Event]:
    """The plugin, and its events: the held step reached, the cancellation seen by that step."""
    reached, seen = threading.Event(), threading.Event()
    plugin = types.ModuleType("holder")

    @hookimpl(tryfirst=True)
    def fsmcp_before_change(change, paths, fs):
        if reached.is_set() or not any(p.path.name == f"f{HELD:03}" for p in paths):
            return
        reached.set()
        for _ in range(ROUNDS):
            if fs.call.cancelled:
                seen.set()
                break
            threading.Event().wait(0.01)
        else:
            return
        for _ in range(ROLLBACK_ROUNDS):
            if restored(root / "f000", first_old):
                return
            threading.Event().wait(0.01)

    plugin.fsmcp_before_change = fsmcp_before_change
    return plugin, reached, seen


def restored(path: Path, text: str) -> bool:
    try:
        return path.read_text() == text
    except FileNotFoundError:  # the rollback puts it back in place of the batch's
        return False


def state(root: Path) -> dict[str, str | None]:
    return {f"f{i:03}": ((root / f"f{i:03}").read_text() if (root / f"f{i:03}").exists() else None) for i in range(FILES)}


@pytest.mark.anyio
# Five runs, not twenty: the held step makes the fault show every time. With the rollback's wait
# for the abandoned step taken out (Run._restore without settle), 60 of 60 runs failed (three
# runs of all twenty), each at the held file written after the rollback.
@pytest.mark.parametrize("run", range(5))
async def test_a_cancelled_transactional_batch_leaves_every_file_as_before(tmp_path: Path, run: int):
    root = tmp_path / "root"
    root.mkdir()
    old = old_files()
    for name, text in old.items():
        if text is not None:
            (root / name).write_text(text)
    plugin, reached, seen = holder(root, old["f000"])
    journal = tmp_path / "journal"
    host = host_for([root], [("holder", plugin)], entry_points=True, journal=str(journal))
    operations = [{"tool": "write_file", "arguments": {"path": name, "content": f"new {name}\n" * 2000}} for name in old]
    async with connect(host) as client:
        arguments = {"operations": operations, "transactional": True}
        await cancel_when(client, "batch_operations", arguments, reached.is_set, rounds=ROUNDS, what="the batch never reached its held step")
        for _ in range(ROUNDS):
            if not host.runner.in_flight:
                break
            await anyio.sleep(0.01)
        assert not host.runner.in_flight
        assert seen.is_set(), "the cancellation never reached the held step"
        assert state(root) == old
        assert sorted(p.name for p in root.iterdir()) == sorted(n for n, t in old.items() if t is not None)
        listed = await ToolCalls(client).ok("list_changes")
        # Nothing changed in the end: no change, or one rolled back; never a write that stays.
        assert "f003" not in listed or "rolled back" in listed, listed
    left = [n for n in (journal / "pending").iterdir() if not n.name.endswith(".lock")] if (journal / "pending").exists() else []
    assert not left, left


TOKEN = "correct-horse-battery-staple-42"


@pytest.mark.anyio
async def test_a_transactional_batch_cancelled_over_http_leaves_nothing(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    journal = tmp_path / "journal"
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n")
    token_file.chmod(0o600)
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            forked("serve", "--transport", "http", "--port", "0", str(root), "--token-file", str(token_file), "--journal", str(journal)),
            cwd=tmp_path, env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
        )
    try:
        url = http_url(process, errors)
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            await cancel_batches(client, root, journal)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.anyio
async def test_a_transactional_batch_cancelled_over_stdio_leaves_nothing(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    journal = tmp_path / "journal"
    async with serve_stdio(str(root), "--journal", str(journal), env={"XDG_STATE_HOME": str(tmp_path / "state")}) as client:
        await cancel_batches(client, root, journal)


async def cancel_batches(client: Client, root: Path, journal: Path) -> None:
    """20 transactional batches of 30 writes, each cancelled once its fourth file exists (the
    attack's trigger: the fifth write is then under way, often): once nothing is pending in the
    journal, not one of their files is left."""
    for run in range(20):
        place = root / f"run{run}"
        place.mkdir()
        operations = [
            {"tool": "write_file", "arguments": {"path": str(place / f"f{i:03}"), "content": "new\n" * 20000}} for i in range(30)
        ]
        held = place / f"f{HELD:03}"
        arguments = {"operations": operations, "transactional": True}
        await cancel_when(client, "batch_operations", arguments, held.exists, rounds=ROUNDS * 5, what="the batch never wrote its fourth file")
        # The change is finished (rolled back, its journal entry settled) once nothing is pending.
        for _ in range(ROUNDS):
            if not [n for n in (journal / "pending").iterdir() if not n.name.endswith(".lock")]:
                break
            await anyio.sleep(0.01)
        assert sorted(os.listdir(place)) == [], f"run {run}: {sorted(os.listdir(place))}"
    listed = await ToolCalls(client).ok("list_changes")
    assert "batch_operations" not in listed or "rolled back" in listed, listed
