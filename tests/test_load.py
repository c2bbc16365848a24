"""Load on the real server over stdio: many calls at once, huge arguments, storms of cancellations.

Each test drives ``python -m fsmcp serve`` with the SDK's own client, checks every answer, and
then reads the server's peak resident memory (VmHWM) from /proc: it must stay bounded. The
numbers are printed (``pytest -s`` shows them) for the record.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from fsmcp.testing import host_for, serve_stdio, text_of

CONCURRENT = 200
TEN_MB = 10 * 1024 * 1024
STORM = 100
ROUNDS = 8
PEAK_RSS_LIMIT_MB = 300

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def server_pid() -> int:
    """The ``fsmcp serve`` this test process started (the SDK does not say)."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"\nPPid:\t{me}\n" in status and b"fsmcp" in cmdline and b"serve" in cmdline:
            return int(entry.name)
    raise AssertionError("the fsmcp serve process was not found")


def status_of(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def peak_mb(pid: int) -> float:
    return status_of(pid, "VmHWM") / 1024


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for d in range(10):
        sub = root / "src" / f"d{d}"
        sub.mkdir(parents=True)
        for f in range(20):
            (sub / f"f{f}.txt").write_text(f"file {d}/{f}\nneedle {d * 20 + f}\n")
    return root


@pytest.mark.anyio
async def test_200_concurrent_calls_on_one_session(tree):
    calls = []
    for i in range(CONCURRENT):
        d, f = divmod(i % 200, 20)
        calls.append([
            ("read_file", {"path": f"src/d{d}/f{f}.txt"}, f"needle {d * 20 + f}\n"),
            ("write_file", {"path": f"out/w{i}.txt", "content": f"written {i}"}, None),
            ("list_directory", {"path": f"src/d{d}"}, f"[FILE] f{f}.txt"),
            ("get_file_info", {"path": f"src/d{d}/f{f}.txt"}, "file"),
            ("grep_files", {"regex": f"needle {d * 20 + f}$", "directory": "src"}, f"f{f}.txt:2:needle"),
        ][i % 5])
    answers: dict[int, tuple[bool, str]] = {}
    async with serve_stdio(str(tree), fresh=True) as client:
        pid = server_pid()

        async def one(i: int) -> None:
            name, args, _ = calls[i]
            result = await client.call_tool(name, args)
            answers[i] = (result.is_error, text_of(result))

        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            for i in range(CONCURRENT):
                tg.start_soon(one, i)
        elapsed = time.monotonic() - started
        peak = peak_mb(pid)
    for i, (name, args, expected) in enumerate(calls):
        is_error, text = answers[i]
        assert not is_error, f"{name} {args}: {text[:300]}"
        if expected is not None:
            assert expected in text, f"{name} {args}: {text[:300]}"
    for i in range(1, CONCURRENT, 5):
        assert (tree / "out" / f"w{i}.txt").read_text() == f"written {i}"
    print(f"\n{CONCURRENT} concurrent calls in {elapsed:.2f}s; server peak RSS {peak:.1f} MB")
    assert peak < PEAK_RSS_LIMIT_MB


@pytest.mark.anyio
async def test_ten_megabyte_arguments(tree):
    big = "".join(f"{i:09d}\n" for i in range(TEN_MB // 10))
    async with serve_stdio(str(tree), fresh=True) as client:
        pid = server_pid()
        peaks = []
        for round_ in range(ROUNDS):
            wrote = await client.call_tool("write_file", {"path": f"big{round_}.txt", "content": big})
            assert not wrote.is_error, text_of(wrote)
            # Refused whole, without an echo of it in the answer.
            unknown = await client.call_tool("read_file", {"path": "src/d0/f0.txt", "junk": big})
            assert unknown.is_error and text_of(unknown).startswith("INVALID_PARAMS") and len(text_of(unknown)) < 10_000
            missing = await client.call_tool("grep_files", {"regex": "x" * 100_000, "directory": "src"})
            assert len(text_of(missing)) < 200_000
            # A 10 MB file read back is cut to the output budget, with a notice.
            back = await client.call_tool("read_file", {"path": f"big{round_}.txt"})
            assert not back.is_error and len(text_of(back)) < 200_000
            peaks.append(peak_mb(pid))
        after = await client.call_tool("read_file", {"path": "src/d0/f0.txt"})
        assert text_of(after) == "file 0/0\nneedle 0\n"
    for round_ in range(ROUNDS):
        assert (tree / f"big{round_}.txt").read_text() == big
    print(f"\n10 MB arguments, {ROUNDS} rounds: server peak RSS after each {', '.join(f'{p:.1f}' for p in peaks)} MB")
    assert peaks[-1] < PEAK_RSS_LIMIT_MB
    # Each round sends 20 MB: kept, they would add 160 MB; the allocator's own growth is far less.
    assert peaks[-1] - peaks[0] < 100, "memory grows with every 10 MB call"


@pytest.mark.anyio
async def test_a_storm_of_cancellations(tree, tmp_path):
    with open(tree / "sparse.bin", "wb") as fh:
        fh.truncate(4 * 1024**3)  # word_count would read 4 GiB of holes for a long while
    async with serve_stdio(str(tree), mode="legacy", fresh=True) as client:
        pid = server_pid()
        read_before = status_of_io(pid)
        started = time.monotonic()
        for round_ in range(STORM // 10):
            async with anyio.create_task_group() as tg:
                for _ in range(10):
                    scope = anyio.CancelScope()

                    async def call(scope: anyio.CancelScope = scope) -> None:
                        with scope:
                            await client.call_tool("word_count", {"path": "sparse.bin"})

                    tg.start_soon(call)
                    tg.start_soon(_cancel_after, scope, 0.05 * (round_ % 3))
            # Between bursts, the server answers.
            with anyio.fail_after(20):  # a bound for a loaded machine: answered, not timed
                ok = await client.call_tool("read_file", {"path": "src/d0/f0.txt"})
            assert text_of(ok) == "file 0/0\nneedle 0\n"
        storm = time.monotonic() - started
        assert status_of_io(pid) - read_before > 1024**2, "no word_count got under way: nothing was cancelled mid-call"
        # The cancelled tools stop: the server soon reads nothing more.
        with anyio.fail_after(20):
            before = status_of_io(pid)
            while True:
                await anyio.sleep(0.5)
                now = status_of_io(pid)
                if now == before:
                    break
                before = now
        threads = status_of(pid, "Threads")
        peak = peak_mb(pid)
    print(f"\n{STORM} cancelled calls in {storm:.2f}s; server peak RSS {peak:.1f} MB, {threads} threads after")
    assert peak < PEAK_RSS_LIMIT_MB
    assert threads < 50  # anyio's worker pool (40) and the server's own, not one per cancelled call


def status_of_io(pid: int) -> int:
    """Bytes the process has read so far (``rchar``)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


async def _cancel_after(scope: anyio.CancelScope, delay: float) -> None:
    await anyio.sleep(delay)
    scope.cancel()


@pytest.mark.parametrize("breadth_first", [False, True])
def test_walks_of_deep_and_wide_trees_hold_few_descriptors(tmp_path, breadth_first):
    """Every directory is opened from the one above it, yet a walk keeps at most 64 open."""
    root = tmp_path / "root"
    deep = root / "deep"
    deep.mkdir(parents=True)
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(300):  # 300 levels: a path far longer than any one openat needs
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)
    for i in range(500):
        (root / "wide" / f"w{i:03}" / "inner").mkdir(parents=True)
    fs = host_for([root]).fs
    gc.collect()  # hosts of earlier tests hold root descriptors until collected, which could fall mid-walk
    baseline = len(os.listdir("/proc/self/fd"))
    most, seen = 0, []
    for rel, depth, entry in fs.walk(".", breadth_first=breadth_first):
        seen.append((rel, depth, entry.kind))
        most = max(most, len(os.listdir("/proc/self/fd")) - baseline) if len(seen) % 25 == 0 else most
    assert len([s for s in seen if s[0].startswith("deep/")]) == 300
    assert max(depth for rel, depth, _ in seen if rel.startswith("deep/")) == 301
    assert len([s for s in seen if s[0].startswith("wide/")]) == 1000
    assert most <= 66, most
    print(f"\nwalk breadth_first={breadth_first}: {len(seen)} entries, at most {most} descriptors open")
    assert len(os.listdir("/proc/self/fd")) == baseline


def test_a_client_that_writes_without_reading_is_held_back_by_its_pipe(tree):
    # Requests sent faster than they are answered (here: no answer read at all) wait in the
    # client's pipe once the server holds PAUSE_BYTES of them, not in the server's memory.
    from fsmcp.serve.wire import PAUSE_BYTES

    server = subprocess.Popen(
        [sys.executable, "-m", "fsmcp", "serve", str(tree)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode() + b"\n")
        server.stdin.flush()
        assert b'"result"' in server.stdout.readline()
        ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": "x" * 1000}}}).encode() + b"\n"
        total = 8 * PAUSE_BYTES // len(ping)
        sent = [0]

        def write() -> None:
            for _ in range(total):
                server.stdin.write(ping)
                sent[0] += 1
            server.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        last, still = -1, 0
        deadline = time.monotonic() + 60
        while writer.is_alive() and still < 4 and time.monotonic() < deadline:
            time.sleep(0.5)
            still, last = (still + 1, last) if sent[0] == last else (0, sent[0])
        assert writer.is_alive(), "the server took every request in without answers being read"
        waiting_mb = sent[0] * len(ping) / 2**20
        rss = status_of(server.pid, "VmRSS") / 1024
        print(f"\nheld back after {waiting_mb:.1f} MiB of {total * len(ping) / 2**20:.0f} MiB sent; server RSS {rss:.0f} MiB")
        assert waiting_mb < 3 * PAUSE_BYTES / 2**20
        assert rss < 150

        answers = 0
        while answers < total:  # read on: every request is answered, and the writer finishes
            line = server.stdout.readline()
            assert line, "the server stopped answering"
            answers += 1
        writer.join(60)
        assert not writer.is_alive() and sent[0] == total
    finally:
        server.kill()
        server.wait()
