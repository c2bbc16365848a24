"""Faults against the real server over stdio: hostile bytes, a vanishing client, a full disk,
files that disappear while they are read. The server keeps serving (or, when its client is
gone, exits cleanly), and no file is ever left half-written.

The protocol is spoken byte by byte here, with no SDK in between, so that the test can send
what no well-behaved client would.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import fsmcp_write.hooks
import pytest

import fsmcp.paths.fs
from fsmcp.testing import RawStdio, connect, forked, host_for, pid_in, text_of

TIMEOUT = 60  # a bound for a loaded machine (tests in parallel): the waits end at the event, not the bound
EXIT_BOUND = 10
"""Seconds a server has to exit once its client is gone: a loaded machine's margin over the
second or two it takes, and far less than the reading of a tebibyte of holes it abandons."""


def reading_endlessly(raw: RawStdio, id_: object) -> None:
    """Start word_count over the endless file, and return once it reports its progress."""
    raw.call(id_, "word_count", {"path": "sparse.bin"}, progress=True)
    assert raw.progressed.wait(TIMEOUT), "word_count reported no progress"


def temp_files(top: Path) -> list[Path]:
    return [p for p in top.rglob("*") if ".fsmcp-tmp" in p.name]


def test_malformed_json_rpc_is_answered_or_dropped_and_the_server_keeps_serving(root):
    """A request the server can attribute gets a JSON-RPC error with its id; a line that is no
    JSON-RPC message at all (not JSON, a batch, no usable id) gets one with id null."""
    raw = RawStdio(str(root))
    raw.initialize()
    raw.send(b"this is not json\n")
    raw.send(b"\xff\xfe\x00 binary garbage \x80\x81\n")
    raw.send(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "argu\n')  # cut short
    raw.send(b"[1, 2, 3]\n")
    raw.send(b"{}\n")
    raw.send(b'{"jsonrpc": "1.0", "id": 2, "method": "tools/list"}\n')
    raw.send(b'{"jsonrpc": "2.0", "id": 3}\n')
    raw.send(b'{"jsonrpc": "2.0", "id": 4, "result": {}}\n')  # an answer to nothing
    raw.send(b"{" * 100_000 + b"\n")  # deep nesting
    raw.send(b"x" * (5 * 1024 * 1024) + b"\n")  # 5 MB of junk on one line
    raw.send(b"\n\n   \n")
    raw.request(10, "no/such/method")
    raw.request(11, "tools/call", {"name": 5})
    raw.request(12, "tools/call", {"arguments": {"path": "a.txt"}})
    raw.request(13, "tools/call", "not an object")  # type: ignore[arg-type]  # not a message: dropped
    raw.call(14, "read_file", {"path": ["a.txt"]})
    raw.call(15, "no_such_tool", {})
    raw.request({"an": "object id"}, "tools/list")  # type: ignore[arg-type]  # dropped
    assert raw.answer(10)["error"]["code"] == -32601
    for id_ in (11, 12):
        assert raw.answer(id_)["error"]["code"] == -32602, id_
    assert raw.text(14)[1].startswith("INVALID_PARAMS: invalid arguments for read_file: path:")
    assert raw.text(15)[1].startswith("INVALID_PARAMS: unknown tool 'no_such_tool'")
    raw.call(16, "read_file", {"path": "a.txt"})
    assert raw.text(16) == (False, "alpha\n")
    assert raw.answer(None)["error"]["code"] in (-32700, -32600)
    rc, stderr = raw.close()
    assert rc == 0, stderr
    assert "Traceback" not in stderr


@pytest.fixture
def endless(root: Path) -> Path:
    with open(root / "sparse.bin", "wb") as fh:
        fh.truncate(1024**4)  # word_count would read a tebibyte of holes: longer than any test runs
    return root


def test_a_client_that_hangs_up_mid_call_leaves_a_server_that_exits_cleanly(endless):
    raw = RawStdio(str(endless))
    raw.initialize()
    reading_endlessly(raw, 1)
    raw.call(2, "write_file", {"path": "b.txt", "content": "bravo"})
    assert raw.text(2) == (False, f"Successfully wrote 5 bytes to {endless.resolve() / 'b.txt'} (created)")
    rc, stderr = raw.close(EXIT_BOUND)  # raises if the server is still there
    assert rc == 0, stderr
    assert "Traceback" not in stderr
    assert temp_files(endless) == []


def vanish_mid_call(root: Path, *, keep_input: bool = False) -> tuple[int, str]:
    """Start an endless call, then drop both pipes as a killed client would (or only the answers'
    with ``keep_input``): exit status, stderr."""
    pid_file = root.parent / "server.pid"
    proc = subprocess.Popen(forked("serve", str(root), pid_file=pid_file), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = pid_in(pid_file)  # the server's own (proc runs the shim that stands for it)
    for message in [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "word_count", "arguments": {"path": "sparse.bin"}}},
    ]:  # fmt: skip
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
    proc.stdout.readline()  # type: ignore[union-attr]
    # No progress asked for: nothing is written while word_count reads, so only the server's
    # own watch on its output can notice the client is gone.
    deadline = time.monotonic() + TIMEOUT
    while _read_bytes(pid) < 64 * 1024**2:
        assert time.monotonic() < deadline, "word_count did not start reading"
        time.sleep(0.05)
    proc.stdout.close()  # type: ignore[union-attr]
    if not keep_input:
        proc.stdin.close()  # type: ignore[union-attr]
    try:
        return proc.wait(EXIT_BOUND), proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
    finally:
        proc.kill()


def test_a_client_that_vanishes_mid_call_leaves_no_server_behind(endless):
    vanish_mid_call(endless)  # wait() raises if the server is still there after EXIT_BOUND
    assert temp_files(endless) == []


def test_a_client_that_stops_reading_mid_call_leaves_no_server_behind(endless):
    """Its input still open, the client closes its end of the answers: nobody is left to answer."""
    rc, stderr = vanish_mid_call(endless, keep_input=True)
    assert rc == 0 and "Traceback" not in stderr, stderr[-500:]


def test_a_client_that_vanishes_mid_call_gets_a_clean_exit(endless):
    rc, stderr = vanish_mid_call(endless)
    assert rc == 0 and "Traceback" not in stderr, stderr[-500:]


def test_a_client_that_stops_reading_ends_the_server_at_its_next_answer(root):
    """The client closed its end of the answers but keeps the requests open: nobody is left to answer."""
    proc = subprocess.Popen(forked("serve", str(root)), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}
    proc.stdin.write(json.dumps(hello).encode() + b"\n")  # type: ignore[union-attr]
    proc.stdin.flush()  # type: ignore[union-attr]
    proc.stdout.readline()  # type: ignore[union-attr]
    proc.stdout.close()  # type: ignore[union-attr]
    # The server watches for its client hanging up (stdio's watch_hang_up): it may have ended
    # before the call is written, and then the write meets a closed pipe. Either way it ends, 0.
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(json.dumps(call).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
    try:
        assert proc.wait(TIMEOUT) == 0
        assert "Traceback" not in proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
    finally:
        with contextlib.suppress(BrokenPipeError):  # the unwritten call, flushed again on close
            proc.stdin.close()  # type: ignore[union-attr]
        proc.kill()


def test_cancellations_of_calls_in_flight_stop_them_and_the_server_answers_the_rest(endless):
    raw = RawStdio(str(endless))
    raw.initialize()
    for i in range(50):
        raw.call(i + 100, "word_count", {"path": "sparse.bin"})
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i + 100}}).encode() + b"\n")
        # Cancelling what was never asked, or twice, changes nothing.
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10_000 + i}}).encode() + b"\n")
    raw.call(1, "read_file", {"path": "a.txt"})
    assert raw.text(1) == (False, "alpha\n")
    # A cancelled request gets no answer; the work behind it stops (no more reading).
    reads = _read_bytes(raw.pid)
    deadline = time.monotonic() + TIMEOUT
    while True:
        time.sleep(0.5)
        now = _read_bytes(raw.pid)
        if now == reads:
            break
        reads = now
        assert time.monotonic() < deadline, "the cancelled word_counts kept reading"
    rc, stderr = raw.close()
    assert rc == 0, stderr


def _read_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MiB tmpfs inside the root, or None where this process may not mount one."""
    root = tmp_path / "root"
    disk = root / "disk"
    disk.mkdir(parents=True)
    mounted = shutil.which("mount") is not None and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
    ).returncode == 0
    yield (root, disk) if mounted else None
    if mounted:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_leaves_every_file_as_it_was(small_disk):
    assert small_disk is not None, "mounting a 1 MiB tmpfs failed: this test needs root (as the project's machines and CI run)"
    root, disk = small_disk
    (disk / "keep.txt").write_bytes(b"old contents\n")
    (disk / "log.txt").write_bytes(b"line\n")
    (root / "big.txt").write_bytes(b"b" * 700_000)
    raw = RawStdio(str(root))
    raw.initialize()
    raw.call(1, "write_file", {"path": "disk/keep.txt", "content": "n" * 2_000_000})
    raw.call(2, "write_file", {"path": "disk/new/deep/file.txt", "content": "n" * 2_000_000})
    raw.call(3, "append_file", {"path": "disk/log.txt", "content": "a" * 2_000_000})
    for id_ in (1, 2, 3):
        is_error, text = raw.text(id_)
        assert is_error and text.startswith("INTERNAL_ERROR") and "no space left" in text, text
    raw.call(4, "copy_file", {"source": "big.txt", "destination": "disk/copy1.txt"})
    assert raw.text(4)[0] is False
    raw.call(5, "copy_file", {"source": "big.txt", "destination": "disk/copy2.txt"})  # no longer fits
    is_error, text = raw.text(5)
    assert is_error and "no space left" in text, text
    assert (disk / "keep.txt").read_bytes() == b"old contents\n"
    assert (disk / "log.txt").read_bytes() == b"line\n"
    assert not (disk / "new").exists()
    assert temp_files(root) == []
    copied = [p for p in disk.iterdir() if p.name.startswith("copy")]
    assert len(copied) == 1 and copied[0].read_bytes() == b"b" * 700_000
    raw.call(6, "write_file", {"path": "disk/keep.txt", "content": "small"})
    assert raw.text(6)[0] is False
    assert (disk / "keep.txt").read_text() == "small"
    rc, stderr = raw.close()
    assert rc == 0, stderr


def test_a_move_across_devices(small_disk):
    """rename() fails with EXDEV onto the tmpfs: the tree is copied there, then removed here."""
    assert small_disk is not None, "mounting a 1 MiB tmpfs failed: this test needs root (as the project's machines and CI run)"
    root, disk = small_disk
    (root / "tree" / "deep").mkdir(parents=True)
    (root / "tree" / "deep" / "f.txt").write_text("f")
    (root / "tree" / "link").symlink_to("deep/f.txt")
    os.chmod(root / "tree" / "deep" / "f.txt", 0o640)
    raw = RawStdio(str(root))
    raw.initialize()
    raw.call(1, "move_file", {"source": "tree", "destination": "disk/tree"})
    assert raw.text(1)[0] is False
    assert not (root / "tree").exists()
    assert (disk / "tree" / "deep" / "f.txt").read_text() == "f"
    assert os.stat(disk / "tree" / "deep" / "f.txt").st_mode & 0o777 == 0o640
    assert os.readlink(disk / "tree" / "link") == "deep/f.txt"
    assert temp_files(root) == []
    assert raw.close()[0] == 0


@pytest.mark.anyio
async def test_injected_enospc_midway_through_a_write(root, monkeypatch):
    """Where no tmpfs can be mounted: the disk fills after the first megabyte written."""
    (root / "keep.txt").write_bytes(b"old contents\n")
    real_write = os.write
    written = 0

    def filling(fd: int, data) -> int:
        nonlocal written
        room = 1024 * 1024 - written
        if len(data) > room:
            written += real_write(fd, bytes(data[:room])) if room > 0 else 0
            raise OSError(errno.ENOSPC, "No space left on device")
        written += real_write(fd, data)
        return len(data)

    host = host_for([root], [("write", fsmcp_write.hooks)])
    async with connect(host) as client:
        monkeypatch.setattr(fsmcp.paths.fs.os, "write", filling)
        result = await client.call_tool("write_file", {"path": "keep.txt", "content": "n" * 3_000_000})
        monkeypatch.undo()
        assert result.is_error and "no space left" in text_of(result)
        again = await client.call_tool("write_file", {"path": "keep.txt", "content": "fits"})
        assert not again.is_error
    assert (root / "keep.txt").read_text() == "fits"
    assert temp_files(root) == []


def test_files_deleted_and_replaced_while_being_read(root):
    big = b"".join(b"%09d\n" % i for i in range(300_000))  # 3 MB
    versions = (big, big[: len(big) // 3])
    target = root / "moving.bin"
    target.write_bytes(big)
    stop = threading.Event()
    churned = []

    def churn() -> None:
        # Each version is written aside and renamed into place whole, or the name is removed:
        # a reader of moving.bin can only ever meet one complete version, or nothing.
        while not stop.is_set():
            for version in versions:
                aside = root.parent / f"aside-{len(version)}"
                aside.write_bytes(version)
                os.replace(aside, target)
                churned.append(len(version))
            target.unlink()

    raw = RawStdio(str(root))
    raw.initialize()
    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        plan = [("read_file", {"path": "moving.bin", "tail": 3}), ("word_count", {"path": "moving.bin"}),
                ("copy_file", {"source": "moving.bin", "destination": "copy.bin", "overwrite": True}),
                ("get_file_info", {"path": "moving.bin"})]  # fmt: skip
        for i in range(400):
            name, args = plan[i % len(plan)]
            raw.call(i + 1, name, args)
        outcomes: dict[str, list[str]] = {}
        for i in range(400):
            is_error, text = raw.text(i + 1)
            code = text.split(":", 1)[0] if is_error else "ok"
            outcomes.setdefault(code, []).append(text[:200])
            assert code in ("ok", "NOT_FOUND"), text[:300]
    finally:
        stop.set()
        thread.join()
    assert len(churned) > 10 and "ok" in outcomes, {code: texts[:2] for code, texts in outcomes.items()}
    raw.call(999, "read_file", {"path": "a.txt"})
    assert raw.text(999) == (False, "alpha\n")
    # What copy_file made is one whole version of the file, never a torn mix.
    if (root / "copy.bin").exists():
        assert (root / "copy.bin").read_bytes() in versions
    assert temp_files(root) == []
    rc, stderr = raw.close()
    assert rc == 0, stderr
    assert "Traceback" not in stderr


@pytest.mark.anyio
async def test_a_write_cancelled_midway_leaves_no_half_file(root):
    """A streamed write abandoned by its caller: the old file stays whole, no temp file stays."""
    (root / "keep.txt").write_bytes(b"old contents\n")
    host = host_for([root])

    def chunks():
        for _ in range(100):
            yield b"x" * 10_000
        raise KeyboardInterrupt  # the caller gives up in the middle

    with pytest.raises(KeyboardInterrupt):
        await anyio.to_thread.run_sync(lambda: host.fs.write_atomic("keep.txt", chunks()))
    assert (root / "keep.txt").read_bytes() == b"old contents\n"
    assert temp_files(root) == []


STUCK_SERVER = """
import sys
import fsmcp_wordcount.tools
from fsmcp.cli.commands import main

def stuck(args, ctx):  # a call that never checks for cancellation (a read that does not return)
    __import__("time").sleep(3600)  # the code runs among the tool module's globals

fsmcp_wordcount.tools.word_count.__code__ = stuck.__code__
sys.exit(main(["serve", sys.argv[1]]))
"""


@pytest.mark.parametrize("answers_open", [True, False])
def test_a_call_stuck_in_its_thread_does_not_hold_a_server_whose_client_left(root, answers_open):
    proc = subprocess.Popen([sys.executable, "-c", STUCK_SERVER, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for message in [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "word_count", "arguments": {"path": "a.txt"}}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ]:  # fmt: skip
            proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        assert [json.loads(proc.stdout.readline())["id"] for _ in range(2)] == [0, 2]  # type: ignore[union-attr]
        if not answers_open:
            proc.stdout.close()  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        assert proc.wait(EXIT_BOUND) == 0
        assert "Traceback" not in proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
    finally:
        proc.kill()
