"""Kill points: a server killed (``kill -9``) at each step of a change loses no record of it.

The real server runs over stdio under ``strace``, which sends it SIGKILL at the N-th call of a
chosen system call, before the call runs: a kill point fixed by count, never by time. After
each kill a fresh host starts on the same root and journal and, before serving, finishes what
the dead one left: every file is old or new in full; a change that reached the disk is in
``list_changes``, marked interrupted, and ``undo_change`` brings back the old state in full; a
transactional batch is rolled back already, unless the kill came after it was recorded finished;
``pending/`` is empty.

Temporary files of atomic writes (``.x.<hex>.fsmcp-tmp``) are another part's to remove at start;
these tests leave them out of "nothing left behind".

Each scene runs at ``KILL_POINTS`` points, split over ``CHUNKS`` tests that pytest-xdist runs
side by side; a point costs a server's start (about 3 s on a loaded machine).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fsmcp.testing import ToolCalls, connect, forked, host_for, pid_in, tree_of

TIMEOUT = 60
KILL_POINTS = 20
SYSCALLS = ("rename", "renameat", "renameat2", "fsync", "fdatasync", "openat", "close", "unlink", "unlinkat", "mkdirat", "write")
"""The system calls a kill may come at: every step of a change is one of them."""
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "crash", "version": "0"}}


def strace() -> str:
    found = shutil.which("strace")
    assert found, "strace is needed for the kill points (apt-get install strace); these tests do not skip"
    return found


@dataclass
class Scene:
    before: dict[str, str]
    """The root's files before the call."""
    after: dict[str, str]
    """The files the call writes, as it leaves them."""
    tool: str
    arguments: dict
    transactional: bool = False


def serve(root: Path, journal: Path) -> list[str]:
    return forked("serve", "--journal", str(journal), str(root), pid_file=pid_file(journal))


def pid_file(journal: Path) -> Path:
    """Where the server on ``journal`` writes its pid (its command runs a shim: ``forked``)."""
    return journal.parent / f"{journal.name}.pid"


def traced(pid: int) -> bool:
    """Whether strace holds every thread of ``pid``."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        for task in tasks:
            status = Path(f"/proc/{pid}/task/{task}/status").read_text()
            if re.search(r"^TracerPid:\s+0$", status, re.M):
                return False
    except FileNotFoundError:
        return True  # gone: nothing left to wait for
    return True


def run(argv: list[str], scene: Scene, env: dict[str, str], strace_args: list[str] = (), pid: Path | None = None) -> bool:
    """Start the server, make the call, under ``strace strace_args -p`` once the server is up (its
    counts start with the call); whether the call was answered (False: killed on the way)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin and proc.stdout
    tracer = None

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        proc.stdin.flush()

    def answer(id_: int) -> dict | None:
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("id") == id_ and "method" not in message:
                return message
        return None

    try:
        send({"id": 0, "method": "initialize", "params": INITIALIZE})
        assert answer(0) is not None, "the server did not start"
        send({"method": "notifications/initialized"})
        # A start the tool-list cache answered loads the plugins at the first call: a call that
        # changes nothing loads them before strace attaches, so that every run's traced call
        # makes the same steps, whether its start hit the cache or not.
        send({"id": 2, "method": "tools/call", "params": {"name": "list_allowed_directories", "arguments": {}}})
        assert answer(2) is not None, "the server did not answer"
        if strace_args:
            assert pid is not None, "strace needs the server's pid file"
            server = pid_in(pid)
            tracer = subprocess.Popen([strace(), "-f", "-qq", *strace_args, "-p", str(server)])
            for _ in range(TIMEOUT * 100):  # bounded by count; each a 10 ms wait
                if traced(server):
                    break
                time.sleep(0.01)
            else:
                raise AssertionError("strace did not attach")
        send({"id": 1, "method": "tools/call", "params": {"name": scene.tool, "arguments": scene.arguments}})
        got = answer(1)
        if got is not None:
            assert not got["result"].get("isError"), got
        proc.stdin.close()
    except BrokenPipeError:
        got = None
    finally:
        proc.wait(TIMEOUT)
        if tracer is not None:
            tracer.wait(TIMEOUT)
    return got is not None


def kill_points(tmp: Path, scene: Scene, env: dict[str, str]) -> list[tuple[str, int]]:
    """``(syscall, n)``: the n-th call of ``syscall`` by one thread since strace attached (its
    counts are a thread's own), chosen evenly among the steps of a traced run of the call."""
    root, journal, log = tmp / "traced-root", tmp / "traced-journal", tmp / "trace.log"
    setup(root, scene)
    assert run(serve(root, journal), scene, env, ["-o", str(log), "-e", f"trace={','.join(SYSCALLS)}"], pid_file(journal))
    counts: dict[tuple[str, str], int] = {}
    steps: list[tuple[str, int]] = []
    for line in log.read_text().splitlines():
        m = re.match(r"(\d+)\s+(\w+)\(", line)
        if m is None:
            continue
        tid, name = m[1], m[2]
        n = counts[tid, name] = counts.get((tid, name), 0) + 1
        if (name, n) not in steps:  # the first thread to make its n-th such call is the one killed
            steps.append((name, n))
    assert len(steps) >= KILL_POINTS, steps
    step = len(steps) / KILL_POINTS
    return [steps[int(i * step)] for i in range(KILL_POINTS)]


def setup(root: Path, scene: Scene) -> None:
    root.mkdir()
    for name, text in scene.before.items():
        (root / name).write_text(text)


def files(root: Path) -> dict[str, str]:
    tree = tree_of(root)
    return {k: v[1].decode() for k, v in tree.items() if v[0] == "file" and ".fsmcp-tmp" not in k}


async def recovered(root: Path, journal: Path, scene: Scene) -> str:
    """Start afresh, check, undo what the journal kept: what the kill left (raises what is wrong)."""
    now = files(root)
    for name in set(now) | set(scene.before) | set(scene.after):
        assert now.get(name) in (scene.before.get(name), scene.after.get(name)), f"{name} is neither old nor new: {now.get(name)!r}"
    if now == scene.before:
        left = "nothing changed"
    else:
        left = "partly changed" if now != scene.after else "all changed"
    wrong = []
    host = host_for([root], entry_points=True, journal=str(journal))  # finishes the dead server's change
    after_start = files(root)
    pending = sorted(os.listdir(journal / "pending")) if (journal / "pending").exists() else []
    if pending:
        wrong.append(f"pending/ holds {pending}")
    async with connect(host) as client:
        s = ToolCalls(client)
        listed = await s.ok("list_changes")
        if scene.transactional:
            # Killed after the batch was recorded finished (before its answer went out): it stands.
            finished = after_start == scene.after and "No changes" not in listed and "interrupted" not in listed
            if finished:
                left += ", finished"
            elif after_start != scene.before:
                wrong.append(f"not rolled back ({sum(after_start.get(k) != v for k, v in scene.before.items())} files new)")
            elif left != "nothing changed" and "rolled back" not in listed:
                wrong.append(f"no rollback recorded: {listed[:200]}")
        elif left != "nothing changed":
            assert after_start == now, "the start changed the files"
            if "No changes" in listed:
                wrong.append("no change recorded")
            else:
                is_error, text = await s.call("undo_change", id=int(listed.split()[0]))
                if is_error:
                    wrong.append(f"undo_change: {text[:200]}")
                elif files(root) != scene.before:
                    wrong.append("undo_change left another state")
    if "interrupted" in listed:
        left += ", recorded as interrupted"
    assert not wrong, f"{left}: " + "; ".join(wrong)
    return left


ATTEMPTS = 3
"""How many times a kill point whose call ended answered is tried again."""
CHUNKS = 2
"""Each scene's kill points are killed at in this many tests, which pytest-xdist runs side by side
(the transactional batch's 20 points took 54 s on a loaded machine, one test)."""
Told = Callable[[str, int, int, Any], list[Any] | None]


async def crash_at_each_point(tmp_path: Path, scene: Scene, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], told: Told) -> None:
    """Chunk ``chunk`` of ``CHUNKS``: every ``CHUNKS``-th kill point from the ``chunk``-th. The
    points come from one traced run for all the chunks (``built_once``), whose directory also
    holds the tool-list cache they share; the chunk that ends last checks what holds of all the
    points."""
    name = f"crash-{scene.tool}-{scene.transactional}"

    def enumerate_points(where: Path) -> dict[str, Any]:
        env = {**os.environ, "XDG_CACHE_HOME": str(where / "cache")}
        return {"cache": str(where / "cache"), "points": kill_points(where, scene, env)}

    shared = built_once(name, enumerate_points)
    env = {**os.environ, "XDG_CACHE_HOME": shared["cache"]}
    points = [(syscall, n) for syscall, n in shared["points"]]
    killed = 0
    outcomes, wrong = [], []
    for i, (syscall, n) in list(enumerate(points))[chunk::CHUNKS]:
        # Only the killing call traced: strace decodes no other call's arguments (to /dev/null).
        kill = ["-o", "/dev/null", "-e", f"trace={syscall}", "-e", f"inject={syscall}:signal=KILL:when={n}"]
        # strace counts a thread's own calls, and which worker thread takes which part of the
        # call is the scheduler's choice: a run whose work went to other threads than the traced
        # run's may end answered, unkilled. Such a point is tried again (a fresh root each time).
        for _ in range(ATTEMPTS):
            # The same paths each time, emptied: the tool-list cache is keyed by the roots and the
            # journal, and a start it answers spares a third of a start's CPU.
            root, journal = tmp_path / "root", tmp_path / "journal"
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(journal, ignore_errors=True)
            pid_file(journal).unlink(missing_ok=True)  # the last run's pid, else read for this one's
            setup(root, scene)
            if not (answered := run(serve(root, journal), scene, env, kill, pid_file(journal))):
                break
        killed += not answered
        try:
            outcomes.append(await recovered(root, journal, scene))
        except AssertionError as exc:
            wrong.append(f"kill at {syscall} #{n}: {str(exc).splitlines()[0]}")
    summary = f"{scene.tool}, chunk {chunk}: {len(outcomes) + len(wrong)} of {len(points)} kill points, {killed} killed the call; " + ", ".join(
        f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes))
    )
    print(summary)
    assert not wrong, f"{summary}; {len(wrong)} wrong:\n" + "\n".join(wrong)
    everyone = told(name, chunk, CHUNKS, [killed, outcomes])
    if everyone is None:
        return
    killed, outcomes = sum(k for k, _ in everyone), [o for _, found in everyone for o in found]
    summary = f"{scene.tool}: {len(points)} kill points, {killed} killed the call; " + ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes)))
    print(summary)
    assert killed >= KILL_POINTS * 3 // 4, summary
    # The points fall inside the change: some leave it on disk (partly, when it has several files).
    assert any(o.startswith("partly" if len(scene.after) > 1 else "all") for o in outcomes), summary


def many(n: int, word: str) -> dict[str, str]:
    return {f"f{i:02}.txt": f"{word} {i}\n" * 20 for i in range(n)}


OLD = many(20, "old")
NEW = many(40, "new")


def batch(transactional: bool) -> Scene:
    """40 writes in one batch_operations, 20 of them over files that exist."""
    operations = [{"tool": "write_file", "arguments": {"path": k, "content": v}} for k, v in NEW.items()]
    return Scene(OLD, NEW, "batch_operations", {"operations": operations, "transactional": transactional}, transactional)


@pytest.mark.anyio
@pytest.mark.parametrize("chunk", range(CHUNKS))
async def test_write_files_killed_midway(tmp_path: Path, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], all_chunks_told: Told):
    scene = Scene(OLD, NEW, "write_files", {"files": [{"path": k, "content": v} for k, v in NEW.items()]})
    await crash_at_each_point(tmp_path, scene, chunk, built_once, all_chunks_told)


@pytest.mark.anyio
@pytest.mark.parametrize("chunk", range(CHUNKS))
async def test_batch_killed_midway(tmp_path: Path, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], all_chunks_told: Told):
    await crash_at_each_point(tmp_path, batch(False), chunk, built_once, all_chunks_told)


@pytest.mark.anyio
@pytest.mark.parametrize("chunk", range(CHUNKS))
async def test_transactional_batch_killed_midway_is_rolled_back(tmp_path: Path, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], all_chunks_told: Told):
    await crash_at_each_point(tmp_path, batch(True), chunk, built_once, all_chunks_told)


@pytest.mark.anyio
@pytest.mark.parametrize("chunk", range(CHUNKS))
async def test_write_file_killed_at_each_step(tmp_path: Path, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], all_chunks_told: Told):
    scene = Scene({"a.txt": "old\n" * 100}, {"a.txt": "new\n" * 100}, "write_file", {"path": "a.txt", "content": "new\n" * 100})
    await crash_at_each_point(tmp_path, scene, chunk, built_once, all_chunks_told)


@pytest.mark.anyio
@pytest.mark.parametrize("chunk", range(CHUNKS))
async def test_edit_file_killed_at_each_step(tmp_path: Path, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], all_chunks_told: Told):
    old = "".join(f"line {i}\n" for i in range(200))
    new = old.replace("line 100\n", "LINE 100\n")
    edits = [{"oldText": "line 100\n", "newText": "LINE 100\n"}]
    await crash_at_each_point(tmp_path, Scene({"a.txt": old}, {"a.txt": new}, "edit_file", {"path": "a.txt", "edits": edits}), chunk, built_once, all_chunks_told)
