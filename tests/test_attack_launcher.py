"""Attacks on the confinement of the programs the server starts, since programs are started by a
running launcher (``launch.py --serve``): each a real server over stdio, each failing if a
promise of docs/security.md breaks (what a program reads, writes, inherits, leaves behind, and
how its end is reported)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from fsmcp.testing import alive, processes_with, serve_stdio, text_of

pytestmark = pytest.mark.anyio

# The worker's own (its process id, between two non-digits): a test that kills what carries the
# marker when it ends must not reach the programs of a test another worker runs meanwhile.
MARKER = f"MARKER-attackl-7f3a-{os.getpid()}-"
PYTHON = "/usr/bin/python3.11"
WITHOUT_USERNS = Path(__file__).parent / "without_userns.py"
WAYS = {"namespaces": None, "landlock-alone": WITHOUT_USERNS}  # the system's, whose standard library the sandbox lets it read


@pytest.fixture
def place() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="fsmcp-attackl-", dir="/tmp")).resolve()
    (top / "root").mkdir()
    (top / "state").mkdir()
    (top / "root" / ".env").write_text(f"TOKEN={MARKER}-secret\n")
    (top / "root" / "open.txt").write_text("open\n")
    (top / "fsmcp.toml").write_text('[plugins.shell]\nallow = ["grep", "cat", "sort"]\nallow_shell = true\n')
    try:
        yield top
    finally:
        for pid in processes_with(MARKER):
            _kill(pid)
        shutil.rmtree(top, ignore_errors=True)


def _serve(top: Path, *roots: str, enable: str = "shell,read,write", state: Path | None = None, under: Path | None = None):
    return serve_stdio(
        *(roots or (str(top / "root"),)), "--config", str(top / "fsmcp.toml"), "--enable", enable,
        env={"XDG_STATE_HOME": str(state or top / "state")}, under=under,
    )


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _command_lines(pids: list[int]) -> list[tuple[int, bytes]]:
    """Each process's command line, for those still there (one may end as it is looked at)."""
    lines = []
    for pid in pids:
        try:
            lines.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))
        except OSError:
            pass
    return lines


def _server_of(pid: int) -> int:
    """The server that started the program ``pid``: the parent of its topmost launcher."""
    server = 0
    while pid > 1:
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if b"launch.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
            server = parent
        pid = parent
    # Only a server is ever signalled: never init, never this test's own process.
    assert server > 1 and server != os.getpid() and b"fsmcp" in Path(f"/proc/{server}/cmdline").read_bytes(), server
    return server


async def _until(check, what: str, rounds: int = 3000) -> None:
    for _ in range(rounds):  # by count, 30 s at most
        if check():
            return
        await anyio.sleep(0.01)
    raise AssertionError(what)


def _launchers_of(server: int) -> list[int]:
    """The running launcher of ``server`` and the launchers it forked (same command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--serve" in argv and argv[argv.index(b"--serve") + 2] == str(server).encode() and alive(int(entry)):
                found.append(int(entry))
    return found


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("how", ["killed", "terminated", "ended"])
async def test_a_program_does_not_outlive_its_server(place, how, way):
    """Promise 4: the server killed (SIGKILL), terminated (SIGTERM) or ending (its client gone) while a program runs,
    one that also left processes of its own (in another session where it may, double-forked):
    none of them, and none of the server's launchers, lives on."""
    command = (
        f"setsid sh -c 'sleep 120; echo {MARKER}-orphan' & ( sh -c 'sleep 120; echo {MARKER}-double' & ); "
        f"sleep 120; echo {MARKER}-program"
    )
    server = 0
    try:
        async with _serve(place, under=WAYS[way]) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "run_shell", {"command": command, "timeout": 60})
                await _until(lambda: len(processes_with(MARKER)) >= 2, "the program never started")
                server = _server_of(processes_with(MARKER)[0])
                if how != "ended":
                    os.kill(server, signal.SIGKILL if how == "killed" else signal.SIGTERM)
                    await _until(lambda: not alive(server), "the server did not end")
                tg.cancel_scope.cancel()
    except Exception:  # a killed server's client fails as it may; what is left is the question
        if how == "ended":
            raise
    left = []
    for _ in range(1000):  # by count: 10 s for the kernel to end what it must
        left = _command_lines(processes_with(MARKER) + _launchers_of(server))
        if not left:
            break
        await anyio.sleep(0.01)
    for pid in _launchers_of(server):
        _kill(pid)
    print(f"server {server} {how}; left behind: {left}")
    assert not left

async def test_a_program_inherits_its_three_streams_and_its_environment_only(place):
    """Promise 3: no descriptor of the server's or of its launchers' (their socket, a report
    pipe, a ruleset, another call's streams) reaches a program, and nothing of the server's
    environment beyond what a program is given; its standard input is not the server's."""
    probe = (
        "import os, stat\n"
        "for fd in range(4096):\n"
        "    try: s = os.fstat(fd)\n"
        "    except OSError: continue\n"
        "    print('fd', fd, stat.filemode(s.st_mode))\n"
        "print('env', sorted(os.environ))\n"
    )
    async with _serve(place) as client:
        await client.call_tool("run_shell", {"command": "true"})  # the launcher runs already
        async with anyio.create_task_group() as tg:  # another program running meanwhile
            tg.start_soon(client.call_tool, "run_shell", {"command": f"sleep 1; echo {MARKER}"})
            result = await client.call_tool("run_shell", {"command": f"{PYTHON} -I -c \"{probe}\""})
    text = text_of(result)
    print(text)
    fds = [line.split()[1:] for line in text.splitlines() if line.startswith("fd ")]
    assert [fd for fd, _ in fds] == ["0", "1", "2"], fds
    assert fds[0][1].startswith("c"), fds  # /dev/null, not the server's stdin (its client's pipe)
    env = [line for line in text.splitlines() if line.startswith("env ")]
    assert env and "XDG_STATE_HOME" not in env[0], env


async def test_a_program_ends_its_call_while_a_later_program_runs_on(place):
    """Promises 3 and 5: a program started while another call's request was with the launcher
    holds none of that call's pipes, so the first call ends (its output whole) when its program
    ends, not when the later one does."""
    root = place / "root"
    async with _serve(place) as client:
        await client.call_tool("run_shell", {"command": "true"})
        ends: list[str] = []

        # Each program writes to a view of its own: the test, not the later program, lets the
        # first end, and the programs look by listing (a name looked up in a view stays missing).
        async def first() -> None:
            result = await client.call_tool("run_shell", {"command": f"until ls -a | grep -qx go; do sleep 0.01; done; echo {MARKER}-first"})
            ends.append(text_of(result))

        async def later() -> None:
            await _until(lambda: processes_with(f"{MARKER}-first"), "the first program never started")
            result = await client.call_tool("run_shell", {"command": f"until ls -a | grep -qx stop; do sleep 0.01; done; echo {MARKER}-later", "timeout": 60})
            ends.append(text_of(result))

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            tg.start_soon(later)
            await _until(lambda: processes_with(f"{MARKER}-later"), "the later program never started")
            (root / "go").touch()
            await _until(lambda: ends, "the first call did not end while the later program ran")
            assert f"{MARKER}-first" in ends[0] and "exit_code: 0" in ends[0], ends
            (root / "stop").touch()
    print(*ends, sep="\n")
    assert f"{MARKER}-later" in ends[1]


async def test_the_journal_and_the_state_directory_are_out_of_a_programs_reach(place):
    """Promise 1: the change journal (outside every root: a server refuses one inside) keeps a
    file's old content; a program naming it by its absolute path reads nothing of it."""
    root, state = place / "root", place / "state"
    (root / "notes.txt").write_text(f"{MARKER}-old\n")
    async with _serve(place) as client:
        await client.call_tool("run_shell", {"command": "true"})  # the launcher runs already
        written = await client.call_tool("write_file", {"path": str(root / "notes.txt"), "content": "new\n"})
        assert not written.is_error, text_of(written)
        journal = [p for p in state.rglob("*") if p.is_file() and f"{MARKER}-old".encode() in p.read_bytes()]
        assert journal, "the journal kept no copy: the attack proves nothing"
        command = f"cat {journal[0]} | grep -a {MARKER.upper()[:6]}; grep -ra {MARKER}-ol[d] {state}; ls {state}/fsmcp; echo done"
        result = await client.call_tool("run_shell", {"command": command})
    text = text_of(result)
    print(text)
    assert "done" in text and f"{MARKER}-old" not in text


async def test_a_programs_end_is_reported_as_it_was(place):
    """Promise 5: an exit status (255 included) or a signal the program took (one it sent itself,
    SIGKILL, SIGSEGV) is what the call reports, with the output it wrote before."""
    cases = {
        "echo a; exit 0": "exit_code: 0\n",
        "echo a; exit 3": "exit_code: 3 ",
        "echo a; exit 255": "exit_code: 255 ",
        "echo a; kill -TERM $$": "exit_code: none (killed by SIGTERM)",
        "echo a; kill -SEGV $$": "exit_code: none (killed by SIGSEGV)",
        "echo a; kill -KILL $$": "exit_code: none (killed by SIGKILL)",
        "echo a; kill -INT 1; kill -TERM 1; kill -HUP 1; kill -QUIT 1; exit 4": "exit_code: 4 ",
    }
    seen = {}
    async with _serve(place) as client:
        for command in cases:
            seen[command] = text_of(await client.call_tool("run_shell", {"command": command}))
    print(*seen.values(), sep="\n")
    for command, expected in cases.items():
        assert seen[command].startswith(expected) and "stdout:\na\n" in seen[command], (command, seen[command])


async def test_a_program_writes_nothing_outside_its_read_write_roots(place):
    """Promise 2: a program writes outside the roots by no path, and nothing in a read-only root."""
    outside, ro = place / "outside", place / "ro"
    outside.mkdir()
    ro.mkdir()
    (ro / "kept.txt").write_text("kept\n")
    command = (
        f"echo x > {outside}/new; mkdir {outside}/dir; ln -s /etc {outside}/link; mv {ro}/kept.txt {place / 'root'}/; "
        f"echo x >> {ro}/kept.txt; touch {ro}/new; cp open.txt {ro}/; echo done"
    )
    async with _serve(place, str(place / "root"), f"{ro}:ro") as client:
        shell = text_of(await client.call_tool("run_shell", {"command": command}))
        sort = text_of(await client.call_tool("run_command", {"command": "sort", "args": [f"--output={ro}/sorted", "open.txt"]}))
    print(shell, sort, sep="\n")
    assert "done" in shell
    assert sorted(os.listdir(outside)) == [] and sorted(os.listdir(ro)) == ["kept.txt"]
    assert (ro / "kept.txt").read_text() == "kept\n"


async def test_a_timed_out_program_that_ignores_sigterm_and_left_its_session_leaves_nothing(place):
    """Promise 4: at a timeout, a program that ignores SIGTERM and a process of its that left the
    program's session (setsid) and its group are both gone once the call has answered."""
    command = f"trap '' TERM; setsid sh -c 'trap \"\" TERM; sleep 120; echo {MARKER}-orphan' & sleep 120; echo {MARKER}-program"
    async with _serve(place) as client:
        result = await client.call_tool("run_shell", {"command": command, "timeout": 1})
        left = _command_lines(processes_with(MARKER))
        for _ in range(1000):  # the namespace's end is the kernel's, soon after the call
            if not left:
                break
            await anyio.sleep(0.01)
            left = _command_lines(processes_with(MARKER))
    print(text_of(result), left)
    assert "killed by SIGKILL" in text_of(result) or "timed out" in text_of(result).lower()
    assert not left


async def test_grep_files_reads_no_secret_moved_in_after_earlier_searches_and_writes_nothing(place):
    """Promises 1 and 2 for ripgrep: a directory holding a ``.env`` renamed into the root after
    earlier searches (and the launcher) ran, plus links to it and to the journal, are searched
    with ignore rules off; options passed as a pattern or a glob start nothing that writes."""
    root, staged, state = place / "root", place / "staged", place / "state"
    (staged / "conf").mkdir(parents=True)
    (staged / "conf" / ".env").write_text(f"TOKEN={MARKER}-moved\n")
    (root / "plain.txt").write_text(f"TOKEN={MARKER}-plain\n")
    async with _serve(place, enable="search,read,write") as client:
        first = text_of(await client.call_tool("grep_files", {"regex": "TOKEN", "directory": str(root), "includeIgnored": True}))
        assert f"{MARKER}-plain" in first and f"{MARKER}-secret" not in first, first
        written = await client.call_tool("write_file", {"path": str(root / "plain.txt"), "content": f"TOKEN={MARKER}-now\n"})
        assert not written.is_error, text_of(written)
        os.rename(staged / "conf", root / "conf")
        os.symlink("conf/.env", root / "link")
        os.symlink(str(state), root / "state-link")
        after = text_of(await client.call_tool("grep_files", {"regex": "TOKEN", "directory": str(root), "includeIgnored": True}))
        before = sorted(os.listdir(root))
        for arguments in (
            {"regex": "--pre=touch"}, {"regex": "x", "globs": ["--pre=touch"]}, {"regex": "-f/etc/passwd"},
            {"regex": "x", "excludeGlobs": ["--pre=touch"]}, {"regex": "x", "globs": ["--replace=y"]},
        ):
            await client.call_tool("grep_files", {"directory": str(root), **arguments})
    print(after)
    assert f"{MARKER}-now" in after
    assert f"{MARKER}-moved" not in after and f"{MARKER}-secret" not in after and f"{MARKER}-plain" not in after
    assert sorted(os.listdir(root)) == before


FORGE = '''
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
taken = []
for pid in (1, os.getppid()):
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as exc:
        print("pidfd_open", pid, exc.strerror)
        continue
    for target in range(3, 256):
        fd = libc.syscall(438, pidfd, target, 0)  # pidfd_getfd: a descriptor of that process's
        if fd >= 0:
            taken.append((pid, target))
            try:
                os.write(fd, (9).to_bytes(4, "little"))  # the wait status of a SIGKILL
            except OSError:
                pass
        elif ctypes.get_errno() != 9:
            print("pidfd_getfd", pid, target, os.strerror(ctypes.get_errno()))
print("taken", taken, flush=True)
sys.exit(0)
'''


async def test_a_program_cannot_take_its_waiters_descriptors_to_forge_its_end(place):
    """Promises 3 and 5: the processes that wait for a program (the namespace's first process)
    hold the pipe its end is reported on; a program that takes their descriptors
    (``pidfd_getfd``, as root of its user namespace) and writes a SIGKILL's status there, then
    exits 0, must still be reported as exiting 0."""
    (place / "root" / "forge.py").write_text(FORGE)
    async with _serve(place) as client:
        text = text_of(await client.call_tool("run_shell", {"command": f"{PYTHON} -I forge.py"}))
    print(text)
    assert "taken" in text
    assert text.startswith("exit_code: 0\n"), text
