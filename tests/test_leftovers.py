"""Nothing left behind: the real server killed (``kill -9``) at many points of a write, an edit,
an undo of a tree and a move across file systems, then started again on the same roots.

The kill points come from the kernel, not from hooks in the product: ``strace`` attaches to the
running server just before the call and sends SIGKILL at the N-th call of one system call in
one thread (``-e inject=SYSCALL:signal=KILL:when=N``). A first, traced run of the same call
lists the system calls it makes; the kill points are spread over that list, its end included.

Each round starts a fresh server (whose start must tidy up after the one killed before it),
checks what it finds, and is itself killed midway through the next call. After every start:
no ``*.fsmcp-tmp`` in the roots, each file old or new in full, a moved tree wholly at one
place, ``list_changes`` readable, and a user's own file named like a temporary one still there.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsmcp.testing import forked, pid_in

TIMEOUT = 60
"""Seconds an answer may take on a loaded machine; only a hang ever waits this long."""
KILL_POINTS = 32
"""Kill points chosen from the traced call; a test stops once it has killed ``needed`` servers
midway (a point past the end of a call that went otherwise this time only gets an answer)."""
TRACED = "openat,write,pwrite64,fsync,fdatasync,fchmod,fchown,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,ftruncate,sendfile,symlinkat,utimensat"
USER_FILE = ".a.0123456789ab.fsmcp-tmp"
STRACE = shutil.which("strace")


class Server:
    """``fsmcp serve`` on pipes (``forked``, or under ``under``), spoken to in raw JSON-RPC lines;
    ``pid`` is the server's own process."""

    def __init__(self, roots: list[Path], journal: Path, state: Path, under: Path | None = None, *options: str):
        args = ["serve", *map(str, roots), "--journal", str(journal), *options]
        pid_file = state.parent / "server.pid"
        pid_file.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, str(under), "-m", "fsmcp", *args] if under else forked(*args, pid_file=pid_file),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "XDG_STATE_HOME": str(state)},
        )  # fmt: skip
        self.pid = self.proc.pid if under else pid_in(pid_file)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        self._request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})
        assert self._answer() is not None, self.stderr()
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def _request(self, method: str, params: dict) -> None:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})

    def _answer(self) -> dict | None:
        """The answer to the last request; None when the server died first."""
        while True:
            line = self._lines.get(timeout=TIMEOUT)
            if line is None:
                return None
            message = json.loads(line)
            if message.get("id") == self._next and "method" not in message:
                return message

    def call(self, tool: str, **arguments: object) -> tuple[bool, str] | None:
        """(isError, text), or None when the server died before it answered."""
        self._request("tools/call", {"name": tool, "arguments": arguments})
        answer = self._answer()
        if answer is None:
            return None
        result = answer["result"]
        return bool(result.get("isError")), "\n".join(c.get("text", "") for c in result["content"])

    def ok(self, tool: str, **arguments: object) -> str:
        outcome = self.call(tool, **arguments)
        assert outcome is not None and not outcome[0], (tool, outcome, self.stderr())
        return outcome[1]

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(running)"
        return self.proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        assert self.proc.wait(TIMEOUT) == 0, self.stderr()


class Strace:
    """strace attached to every thread of a running server: tracing, or killing at a point."""

    def __init__(self, pid: int, args: list[str]):
        assert STRACE, "strace is needed for the kill points (install it); this test does not skip"
        self.pid = pid
        self.proc = subprocess.Popen([STRACE, "-f", "-qq", *args, "-p", str(pid)], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(4000):  # polled by count: a loaded machine takes longer, never forever
            if self._attached():
                return
            assert self.proc.poll() is None, self.proc.stderr.read().decode()  # type: ignore[union-attr]
            time.sleep(0.005)
        raise AssertionError("strace did not attach")

    def _attached(self) -> bool:
        try:
            tasks = os.listdir(f"/proc/{self.pid}/task")
            for tid in tasks:
                with open(f"/proc/{self.pid}/task/{tid}/status") as fh:
                    if re.search(r"^TracerPid:\s+0$", fh.read(), re.M):
                        return False
        except FileNotFoundError:
            return False
        return True

    def stop(self, dead: bool = False) -> None:
        """Detach (SIGINT) from a live server; from a killed one, end strace: a traced zombie
        would wait for it."""
        if self.proc.poll() is None:
            self.proc.send_signal(9 if dead else 2)
        self.proc.wait(TIMEOUT)


def kill_points(log: Path, many: int = KILL_POINTS) -> list[tuple[str, int]]:
    """(syscall, N) for events spread over a traced call, the last ones always among them (first)."""
    counts: dict[tuple[str, str], int] = {}
    events: list[tuple[str, int]] = []
    for line in log.read_text().splitlines():
        m = re.match(r"(\d+)\s+(\w+)\(", line)
        if not m or "resumed>" in line:
            continue
        key = (m[1], m[2])
        counts[key] = counts.get(key, 0) + 1
        events.append((m[2], counts[key]))
    assert len(events) >= many, f"the call made only {len(events)} traced system calls"
    step = len(events) / (many - 4)
    spread = sorted({events[int(i * step)] for i in range(many - 4)}, key=events.index)
    last = [e for e in events[-4:] if e not in spread]
    return last + spread  # the end (the renames into place, the answer) first: a test may stop early


def temporaries(*tops: Path) -> list[str]:
    return [str(p) for top in tops for p in top.rglob("*") if p.name.endswith(".fsmcp-tmp") and p.name != USER_FILE]


def run_rounds(
    tmp_path: Path,
    roots: list[Path],
    setup: Callable[[Server], dict],
    call: Callable[[Server, dict], tuple[bool, str] | None],
    check: Callable[[Server, dict], None],
    *,
    under: Path | None = None,
    many: int = KILL_POINTS,
    needed: int = 20,
    top: Path | None = None,
    chunk: tuple[Callable[[str, Callable[[Path], Any]], Any], str, int, int] | None = None,
) -> tuple[int, int]:
    """A traced call, then one killed at each kill point until ``needed`` were; after each, a new
    server checks what it finds.

    ``setup`` makes the round's call ready (on a fresh server) and returns what ``check`` will
    need; ``check`` runs on the next fresh server. Returns (kills, rounds).

    ``chunk``, ``(built_once, name, i, n)``: this run is chunk ``i`` of ``n`` of one test, which
    kills at every ``n``-th point from the ``i``-th; the points come from one traced call for all
    chunks (made by the first chunk to need them, with ``built_once``), so that together they
    kill at the points one run would."""
    journal, state = (top or tmp_path) / "journal", (top or tmp_path) / "state"
    for root in roots:
        (root / USER_FILE).write_text("a user's own file\n")
    server = Server(roots, journal, state, under)
    plan = setup(server)

    def traced(_: Path) -> list[tuple[str, int]]:
        log = tmp_path / "trace.log"  # written by strace, as root
        tracer = Strace(server.pid, ["-o", str(log), "-e", f"trace={TRACED}"])
        assert call(server, plan) is not None
        tracer.stop()
        return kill_points(log, many)

    if chunk is None:
        points = traced(tmp_path)
    else:  # a chunk that finds the points made checks the state its setup left (no call made)
        built_once, name, i, n = chunk
        points = [(syscall, number) for syscall, number in built_once(f"kill-points-{name}", traced)][i::n]
    kills = rounds = 0
    for syscall, n in [*points, (None, 0)]:
        if server.proc.poll() is None:
            server.close()
        server = Server(roots, journal, state, under)  # the start after a kill tidies up
        check(server, plan)
        assert temporaries(*roots) == [], (syscall, n)
        assert all((root / USER_FILE).read_text() == "a user's own file\n" for root in roots)
        assert not server.call("list_changes")[0]  # type: ignore[index]
        if syscall is None or kills >= needed:
            break
        plan = setup(server)
        killer = Strace(server.pid, ["-o", "/dev/null", "-e", f"trace={syscall}", "-e", f"inject={syscall}:signal=KILL:when={n}"])
        outcome = call(server, plan)
        killer.stop(dead=outcome is None)
        rounds += 1
        print(f"kill at {syscall} #{n}: {'killed' if outcome is None else 'answered'}", flush=True)
        if outcome is None:
            assert server.proc.wait(TIMEOUT) == -9
            kills += 1
        else:
            assert not outcome[0], outcome
    server.close()
    print(f"{rounds} rounds, {kills} killed midway")
    return kills, rounds


AS_NOBODY = Path(__file__).resolve().parent / "as_nobody.py"
NOBODY = 65534


def test_a_server_run_as_nobody_killed_midway_leaves_nothing_behind_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """As an ordinary user: its own ledger place, its own files; the same promise, fewer points."""
    if os.geteuid() != 0:
        pytest.fail("running the server as nobody needs root (the tests run as root)")
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="fsmcp-leftovers-", dir="/tmp")).resolve()  # pytest's tmp is root's alone
    try:
        top.chmod(0o755)
        root = top / "root"
        root.mkdir()
        (root / "big.txt").write_bytes(b"a" * (1 << 20))
        (root / USER_FILE).write_text("a user's own file\n")
        for path in (top / "state", top / "journal", top / "cache"):
            path.mkdir(mode=0o700)
        for path in (root, *root.iterdir(), top / "state", top / "journal", top / "cache"):
            os.chown(path, NOBODY, NOBODY)
        # A tool-list cache nobody can write (root's is not): each start after the first answers from it.
        monkeypatch.setenv("XDG_CACHE_HOME", str(top / "cache"))
        letters = iter("bcdefghijklmnopqrstuvwxyz")

        def setup(server: Server) -> dict:
            return {"before": (root / "big.txt").read_bytes(), "after": next(letters).encode() * (1 << 20)}

        def call(server: Server, plan: dict) -> tuple[bool, str] | None:
            return server.call("write_file", path="big.txt", content=plan["after"].decode())

        def check(server: Server, plan: dict) -> None:
            assert (root / "big.txt").read_bytes() in (plan["before"], plan["after"])
            assert all(p.stat().st_uid == NOBODY for p in root.iterdir())

        kills, rounds = run_rounds(tmp_path, [root], setup, call, check, under=AS_NOBODY, many=14, needed=8, top=top)
        assert kills >= 8, (kills, rounds)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _shown(data: bytes) -> str:
    return f"{len(data):,} bytes starting {data[:12]!r}"


def test_a_big_write_killed_anywhere_leaves_the_old_file_or_the_new_and_nothing_beside_it(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    size = 5 * 1024 * 1024
    (root / "big.txt").write_bytes(b"a" * size)
    letters = iter("bcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    def setup(server: Server) -> dict:
        return {"before": (root / "big.txt").read_bytes(), "after": next(letters).encode() * size}

    def call(server: Server, plan: dict) -> tuple[bool, str] | None:
        return server.call("write_file", path="big.txt", content=plan["after"].decode())

    def check(server: Server, plan: dict) -> None:
        now = (root / "big.txt").read_bytes()
        assert now in (plan["before"], plan["after"]), _shown(now)
        assert USER_FILE in server.ok("list_directory", path=".")
        assert ".fsmcp-tmp\n" not in server.ok("list_directory", path=".").replace(USER_FILE, "")

    kills, rounds = run_rounds(tmp_path, [root], setup, call, check)
    assert kills >= 20, (kills, rounds)


def test_an_edit_killed_anywhere_leaves_the_old_file_or_the_new_and_nothing_beside_it(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    body = b"".join(b"line %d of a long file\n" % i for i in range(100_000))  # 2.5 MB
    (root / "doc.txt").write_bytes(b"marker-0\n" + body)
    rounds = iter(range(1, 1000))

    def setup(server: Server) -> dict:
        before = (root / "doc.txt").read_bytes()
        k = int(before.split(b"\n", 1)[0].removeprefix(b"marker-"))
        return {"before": before, "after": b"marker-%d\n" % next(rounds) + body, "old": f"marker-{k}"}

    def call(server: Server, plan: dict) -> tuple[bool, str] | None:
        return server.call("edit_file", path="doc.txt", edits=[{"oldText": plan["old"], "newText": plan["after"].split(b"\n", 1)[0].decode()}])

    def check(server: Server, plan: dict) -> None:
        now = (root / "doc.txt").read_bytes()
        assert now in (plan["before"], plan["after"]), _shown(now)

    kills, rounds_run = run_rounds(tmp_path, [root], setup, call, check)
    assert kills >= 20, (kills, rounds_run)


def _tree(top: Path) -> dict[str, bytes]:
    return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


def test_an_undo_of_a_tree_killed_anywhere_leaves_it_absent_or_whole_and_no_staging_folder(tmp_path: Path):
    root = tmp_path / "root"
    (root / "tree" / "sub").mkdir(parents=True)
    for i in range(40):
        (root / "tree" / ("sub" if i % 2 else "") / f"f{i}.txt").write_text(f"file {i}\n" * 50)
    whole = _tree(root / "tree")

    def setup(server: Server) -> dict:
        server.ok("delete_file", path="tree", recursive=True)
        return {}

    def call(server: Server, plan: dict) -> tuple[bool, str] | None:
        return server.call("undo_change")  # this session's last change: the delete

    def check(server: Server, plan: dict) -> None:
        listing = server.ok("list_directory", path=".")
        assert "fsmcp-tmp" not in listing.replace(USER_FILE, ""), listing
        if not (root / "tree").exists():  # the undo did not get as far: a later one puts the tree back
            pending = [m[1] for m in re.finditer(r"^(\d+) .* delete_file .*$", server.ok("list_changes"), re.M) if "undone" not in m[0]]
            server.ok("undo_change", id=int(pending[0]))
            assert "fsmcp-tmp" not in server.ok("list_directory", path=".").replace(USER_FILE, "")
        assert _tree(root / "tree") == whole

    kills, rounds_run = run_rounds(tmp_path, [root], setup, call, check)
    assert kills >= 20, (kills, rounds_run)


CHUNKS = 4
"""The copied tree's kill points are killed at in this many tests, which pytest-xdist runs side
by side: one test of them all took two minutes on a loaded machine, the suite's longest."""
COPIED_TREE_POINTS = 32
"""Kill points spread over the undo of the copied tree. The deletion of the copy set aside is the
last ninth or so of the undo's system calls; 32 points put three of them inside it (unlinkat
#27, #62, #97, in three of the four chunks). With the bug put back (journal_restore.py's put_back
deleting the set-aside tree under its ledger note "put back when found", not renamed and noted
"drop" first), the test failed in 3 of 3 runs, each time at all three points: the next start
put a half-deleted tree back. 64 points (before) killed at the same kind of state twice as often."""


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_an_undo_of_a_copied_tree_killed_anywhere_leaves_it_absent_or_whole(
    tmp_path: Path, chunk: int, built_once: Callable[[str, Callable[[Path], Any]], Any], all_chunks_told: Callable[..., list | None]
):
    # The undo sets the copy aside, then deletes it: killed midway through that deletion, the next
    # start must finish it, never put a half-deleted tree back.
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    for i in range(100):  # its deletion, one unlinkat a file, a good part of the undo's system calls
        (root / "d" / f"f{i}.txt").write_text(f"file {i}\n" * 50)
    whole = _tree(root / "d")

    def setup(server: Server) -> dict:
        server.ok("copy_file", source="d", destination="e")
        return {}

    def call(server: Server, plan: dict) -> tuple[bool, str] | None:
        return server.call("undo_change")  # this session's last change: the copy

    def check(server: Server, plan: dict) -> None:
        if (root / "e").exists():  # the undo did not get as far; or it brought back a part of e
            assert _tree(root / "e") == whole, sorted(_tree(root / "e"))
            server.ok("delete_file", path="e", recursive=True)
        assert _tree(root / "d") == whole

    # Every point of the spread, which the deletion's unlinkats are a part of (the undo's own copies come first).
    name = "copied-tree"
    many = COPIED_TREE_POINTS
    kills, rounds_run = run_rounds(tmp_path, [root], setup, call, check, many=many, needed=many, chunk=(built_once, name, chunk, CHUNKS))
    everyone = all_chunks_told(name, chunk, CHUNKS, [kills, rounds_run])
    if everyone is not None:  # the last chunk to end: what the points did together (5 in 8 killed midway, as 40 of 64 were)
        assert sum(k for k, _ in everyone) >= many * 5 // 8, everyone


@pytest.fixture
def mounted(tmp_path: Path):
    """A root with a tmpfs mounted inside it: a move between the two crosses file systems."""
    if os.geteuid() != 0:
        pytest.fail("mounting a tmpfs inside the root needs root (the tests run as root)")
    root = tmp_path / "root"
    (root / "mnt").mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "fsmcp-test", str(root / "mnt")], check=True)
    try:
        yield root
    finally:
        subprocess.run(["umount", "-l", str(root / "mnt")], check=False)


def test_a_move_across_file_systems_killed_anywhere_leaves_the_tree_wholly_at_one_place(tmp_path: Path, mounted: Path):
    root = mounted
    here, there = root / "data", root / "mnt" / "data"
    for i in range(300):
        (here / f"d{i % 10}").mkdir(parents=True, exist_ok=True)
        (here / f"d{i % 10}" / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    whole = _tree(here)

    def at() -> list[Path]:
        return [p for p in (here, there) if p.exists()]

    def setup(server: Server) -> dict:
        [src] = at()
        return {"src": src, "dst": there if src == here else here}

    def call(server: Server, plan: dict) -> tuple[bool, str] | None:
        return server.call("move_file", source=str(plan["src"]), destination=str(plan["dst"]))

    def check(server: Server, plan: dict) -> None:
        places = at()
        assert len(places) == 1, places
        assert _tree(places[0]) == whole, (places, len(_tree(places[0])))
        assert temporaries(root / "mnt") == []

    kills, rounds_run = run_rounds(tmp_path, [root], setup, call, check)
    assert kills >= 20, (kills, rounds_run)


NOTE = """
import os, sys, time
from fsmcp.paths import dirfd, temporaries
from pathlib import Path
temporaries.LEDGER.directory = temporaries.prepare((), Path(sys.argv[1]))
fd = os.open(sys.argv[2], dirfd.LIST)
for name in sys.argv[3:]:
    n = temporaries.LEDGER.note({"t": "tmp", **temporaries.where(fd), "name": name})
    if os.path.lexists(os.path.join(sys.argv[2], name)):
        temporaries.LEDGER.made(n, fd, name)
print("noted", flush=True)
time.sleep(3600)
"""


def test_only_a_dead_servers_own_temporaries_are_removed_and_never_a_users_file(tmp_path: Path):
    """A ledger whose writer lives is left alone; a dead one's names are removed only where they
    are still what it recorded, and not by a read-only server; a user's file named like a
    temporary one is never removed."""
    root = tmp_path / "root"
    root.mkdir()
    state = tmp_path / "state"
    ours = ".f.aaaaaaaaaaaa.fsmcp-tmp"
    (root / ours).write_text("left by a server\n")
    (root / USER_FILE).write_text("a user's own file\n")
    swapped = ".g.bbbbbbbbbbbb.fsmcp-tmp"  # recorded, then replaced by a user's file of the same name
    (root / swapped).write_text("the server's\n")
    theirs = ".h.cccccccccccc.fsmcp-tmp"  # recorded before it was made, then made by another user
    (tmp_path / "journal").mkdir(mode=0o700)
    holder = subprocess.Popen(
        [sys.executable, "-c", NOTE, str(tmp_path / "journal"), str(root), ours, swapped, theirs, "not-a-temporary.txt"],
        stdout=subprocess.PIPE, env={**os.environ, "XDG_STATE_HOME": str(state)},
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == b"noted\n"  # type: ignore[union-attr]
        os.unlink(root / swapped)
        (root / swapped).write_text("a user's file\n")
        (root / theirs).write_text("another user's file\n")
        os.chown(root / theirs, 65534, 65534)
        (root / "not-a-temporary.txt").write_text("kept\n")
        Server([root], tmp_path / "journal", state).close()
        assert (root / ours).exists(), "the temporary file of a server still running was removed"
    finally:
        holder.kill()
        holder.wait()
    Server([root], tmp_path / "journal", state, None, "--read-only").close()
    assert (root / ours).exists(), "a read-only server removed a file"
    Server([root], tmp_path / "journal", state).close()
    assert not (root / ours).exists()
    assert sorted(p.name for p in root.iterdir()) == sorted([USER_FILE, swapped, theirs, "not-a-temporary.txt"])
    assert (root / swapped).read_text() == "a user's file\n"
    assert os.listdir(tmp_path / "journal" / "temporaries") == []


def test_a_busy_ledger_is_rewritten_with_its_pending_lines_only(tmp_path: Path):
    """A server never idle (always one temporary pending) keeps its ledger small all the same."""
    from fsmcp.paths import temporaries

    (tmp_path / "journal").mkdir(mode=0o700)
    ledger = temporaries.Ledger()
    ledger.directory = temporaries.prepare((), tmp_path / "journal")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        pending = ledger.note({"t": "tmp", **temporaries.where(fd), "name": ".kept.000000000000.fsmcp-tmp"})
        for i in range(20_000):
            with contextlib.ExitStack() as stack:
                number = ledger.note({"t": "tmp", **temporaries.where(fd), "name": f".f{i}.{'0' * 12}.fsmcp-tmp"})
                stack.callback(ledger.done, number)
        [name] = os.listdir(tmp_path / "journal" / "temporaries")
        data = (tmp_path / "journal" / "temporaries" / name).read_bytes()
        assert len(data) < 1 << 20
        assert list(temporaries._records(data)) == [pending]
    finally:
        os.close(fd)
        ledger.done(pending)
