"""Attacks on how a program's end is reported: a program may not make its call report another end
than the one it had (its exit status, or the signal that really killed it), nor change the end
reported for another call's program, by signals to the processes around it (by pid, by its
process group, to every process it may signal, through ``F_SETOWN``), by stopping them, by
their resource limits (prlimit), by children that outlive it, or under load. Each a real server over stdio, both ways (in namespaces
of its own, and by Landlock alone where user namespaces are refused)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from fsmcp.testing import processes_with, serve_stdio, text_of

pytestmark = pytest.mark.anyio

# The worker's own (its process id, between two non-digits): a test that kills what carries the
# marker when it ends must not reach the programs of a test another worker runs meanwhile.
MARKER = f"MARKER-attackend-9d41-{os.getpid()}-"
PYTHON = "/usr/bin/python3.11"
WITHOUT_USERNS = Path(__file__).parent / "without_userns.py"
WAYS = {"namespaces": None, "landlock-alone": WITHOUT_USERNS}
WAITER = {"namespaces": "1", "landlock-alone": "$PPID"}
"""How a program names the process that waits for it: its namespace's first process, or its launcher."""


@pytest.fixture
def place() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="fsmcp-attackend-", dir="/tmp")).resolve()
    (top / "root").mkdir()
    (top / "state").mkdir()
    (top / "fsmcp.toml").write_text('[plugins.shell]\nallow = ["sleep"]\nallow_shell = true\n')
    try:
        yield top
    finally:
        for pid in processes_with(MARKER):
            _kill(pid)
        shutil.rmtree(top, ignore_errors=True)


def _serve(top: Path, under: Path | None = None):
    return serve_stdio(
        str(top / "root"), "--config", str(top / "fsmcp.toml"), "--enable", "shell,read,write",
        env={"XDG_STATE_HOME": str(top / "state")}, under=under,
    )


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def _until(check, what: str, rounds: int = 3000) -> None:
    for _ in range(rounds):  # by count, 30 s at most
        if check():
            return
        await anyio.sleep(0.01)
    raise AssertionError(what)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def _beside(place: Path, way: str, first: str, script: str, timeout: int) -> dict[str, str]:
    """What two calls at once answer: ``first`` (a shell command carrying ``{MARKER}-first``), and,
    once it runs, the program ``script`` given the process ids of the first program, its parent
    and its process group."""
    async with _serve(place, WAYS[way]) as client:
        await client.call_tool("run_shell", {"command": "true"})
        ends: dict[str, str] = {}

        async def call(name: str, command: str) -> None:
            ends[name] = text_of(await client.call_tool("run_shell", {"command": command, "timeout": timeout}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "first", first)
            await _until(lambda: processes_with(f"{MARKER}-first"), "the first program never started")
            program = min(processes_with(f"{MARKER}-first"))
            pids = {program, _parent(program), os.getpgid(program)}
            tg.start_soon(call, "second", f"{PYTHON} -I {script} {' '.join(map(str, sorted(pids)))}")
    print(pids, *ends.values(), sep="\n")
    return ends


SIGNALS = ("USR2", "ALRM", "PIPE", "VTALRM", "PROF", "XCPU", "IO", "SEGV", "TERM", "INT", "HUP", "QUIT")
"""Signals whose default action ends a process (SIGUSR1, which a launcher takes for its server's
end and answers by killing its group, is tried alone)."""


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_signals_its_waiters_by_every_name_ends_as_it_ended(place, way):
    """A program that ignores every ending signal, then sends each to its waiter by pid and to
    every process it may (-1), then exits 4, is reported as exiting 4. (Its process group, which
    its launcher leads: the test below.)"""
    traps = " ".join(SIGNALS)
    sends = "; ".join(f"kill -s {sig} {target}" for target in (WAITER[way], "-1") for sig in SIGNALS)
    command = f"trap '' {traps}; {{ {sends}; }} 2>/dev/null; sleep 0.3; echo a; exit 4"
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": command, "timeout": 10}))
    print(text)
    assert text.startswith("exit_code: 4 ") and "stdout:\na\n" in text, text


@pytest.mark.parametrize("sig", ["USR2", "ALRM", "USR1"])
@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_signals_its_process_group_ends_as_it_ended(place, way, sig):
    """One signal at a time to the program's own process group (``kill 0``): its launcher leads
    that group. The program ignores it and exits 4 (SIGUSR1 may have its launcher kill the group
    at once: then the program was killed by SIGKILL before its output, and is reported so)."""
    command = f"trap '' {sig}; kill -s {sig} 0; sleep 0.3; echo a; exit 4"
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": command, "timeout": 10}))
    print(text)
    killed = sig == "USR1" and text.startswith("exit_code: none (killed by SIGKILL)") and "stdout:\na\n" not in text
    assert killed or (text.startswith("exit_code: 4 ") and "stdout:\na\n" in text), text


PROVEN = (
    "import os, signal\n"
    "signal.signal(signal.SIGUSR2, signal.SIG_IGN)\n"
    "program = os.getpid()\n"
    "if os.fork() == 0:\n"
    "    while os.getppid() == program:  # until the program has ended: it exits 4, nothing else ends it\n"
    "        pass\n"
    "    open('fired', 'w').close()\n"
    "    while True:\n"
    "        os.kill(0, signal.SIGUSR2)  # its process group: the program's launcher leads it\n"
    "os._exit(4)\n"
)


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_exited_4_is_not_reported_killed_by_what_it_left(place, way):
    """The program (python, exec'd by the shell: the call's program itself) leaves a child that
    ignores SIGUSR2 and exits 4. Once the program has ended (the child's parent changed) the
    child sends SIGUSR2 to its process group without pause, until its namespace ends. Nothing
    could kill the program before that: it exited 4, and the call must report so."""
    (place / "root" / "proven.py").write_text(PROVEN)
    seen = []
    async with _serve(place, WAYS[way]) as client:
        for _ in range(10):
            (place / "root" / "fired").unlink(missing_ok=True)
            text = text_of(await client.call_tool("run_shell", {"command": f"exec {PYTHON} -I proven.py", "timeout": 10}))
            seen.append((text.splitlines()[0], (place / "root" / "fired").exists()))
    print(*seen, sep="\n")
    assert all(line.startswith("exit_code: 4 ") for line, _ in seen), seen


STOPS = {
    # A process of its own in another session (it may make one) continues it: the stop reaches
    # its process group, its launcher with it.
    "namespaces": (
        "p=$$; setsid sh -c \"touch ready; sleep 0.5; kill -s CONT $p\" & "
        "while [ ! -e ready ]; do sleep 0.01; done; kill -s STOP 1 0; echo a; exit 4"
    ),
    # setsid is refused here, and the program's own stop reaches its group: its launcher by pid.
    "landlock-alone": "kill -s STOP $PPID; echo a; exit 4",
}


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_stops_its_waiters_ends_as_it_ended(place, way):
    """A program that stops its waiter and its process group (its launcher with it), is
    continued by a process of its own, prints ``a`` and exits 4 at once: reported as exiting 4,
    not killed at the timeout."""
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": STOPS[way], "timeout": 5}))
    print(text)
    assert text.startswith("exit_code: 4 ") and "timed_out" not in text, text


KILLED = (
    "import os, signal\n"
    "program = os.getpid()\n"
    "if os.fork() == 0:\n"
    "    while os.getppid() == program:  # until the program has ended: it exits 4, nothing else ends it\n"
    "        pass\n"
    "    open('fired', 'w').close()\n"
    "    os.kill(0, signal.SIGKILL)  # its process group (itself too): no handler keeps a launcher from that\n"
    "os._exit(4)\n"
)


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_exited_4_is_not_reported_killed_by_a_sigkill_to_its_group(place, way):
    """As above with one SIGKILL to the group once the program has ended: a signal no launcher
    can ignore (the namespace's first process, its init, is spared it from inside)."""
    (place / "root" / "killed.py").write_text(KILLED)
    seen = []
    async with _serve(place, WAYS[way]) as client:
        for _ in range(10):
            (place / "root" / "fired").unlink(missing_ok=True)
            text = text_of(await client.call_tool("run_shell", {"command": f"exec {PYTHON} -I killed.py", "timeout": 10}))
            seen.append((text.splitlines()[0], (place / "root" / "fired").exists()))
    print(*seen, sep="\n")
    assert all(line.startswith("exit_code: 4 ") for line, _ in seen), seen


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_sends_terminal_stops_to_its_group_ends_as_it_ended(place, way):
    """SIGTSTP, SIGTTIN and SIGTTOU to the program's own group (its launcher leads it): a group
    whose leader's parent is in another session is orphaned, and the kernel drops them."""
    command = "kill -s TSTP 0; kill -s TTIN 0; kill -s TTOU 0; echo a; exit 4"
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": command, "timeout": 5}))
    print(text)
    assert text.startswith("exit_code: 4 ") and "timed_out" not in text and "stdout:\na\n" in text, text


MANY = (
    "import os, resource, signal, sys\n"
    "count, limit = int(sys.argv[1]), sys.argv[2] == 'limit'\n"
    "if limit:  # its waiter's CPU time: 1 s, then SIGXCPU (prlimit needs only the same user)\n"
    "    try:\n"
    "        resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, resource.RLIM_INFINITY))\n"
    "        print('limited', os.getppid(), flush=True)\n"
    "    except OSError as exc:\n"
    "        print('prlimit', exc.strerror, flush=True)\n"
    "for _ in range(count):\n"
    "    if os.fork() == 0:\n"
    "        signal.pause()\n"
    "        os._exit(0)\n"
    "print('forked', count, flush=True)\n"
    "os._exit(0)\n"
)


@pytest.mark.parametrize("limit", ["limit", "no-limit"])
@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_leaves_many_children_ends_as_it_ended(place, way, limit):
    """The program forks 2000 children that wait, and exits 0 (first, with ``limit``, it sets
    its waiter's CPU limit to 1 s: prlimit asks no more than the same user). Its waiter kills
    what it left: the call must report exit 0, within its timeout."""
    (place / "root" / "many.py").write_text(MANY)
    async with _serve(place, WAYS[way]) as client:
        started = anyio.current_time()
        text = text_of(await client.call_tool("run_shell", {"command": f"exec {PYTHON} -I many.py 2000 {limit}", "timeout": 20}))
        took = anyio.current_time() - started
    print(text, f"\ntook {took:.1f} s")
    assert text.startswith("exit_code: 0\n") and "forked 2000" in text and "timed_out" not in text, text


LIMITED = (
    "import os, resource, signal, sys\n"
    "name, value, count = sys.argv[1], int(sys.argv[2]), int((sys.argv[3:] or ['50'])[0])\n"
    "try:  # its waiter's limit (prlimit asks no more than the same user)\n"
    "    resource.prlimit(os.getppid(), getattr(resource, name), (value, value))\n"
    "    print('limited', name, value, flush=True)\n"
    "except OSError as exc:\n"
    "    print('prlimit', exc.strerror, flush=True)\n"
    "for _ in range(count):  # children left behind, for the waiter to find and end\n"
    "    if os.fork() == 0:\n"
    "        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a timeout's SIGTERM ends them not\n"
    "        signal.pause()\n"
    "        os._exit(0)\n"
    "print('forked', flush=True)\n"
    "os._exit(4)\n"
)


@pytest.mark.parametrize("limit", ["RLIMIT_NOFILE=0", "RLIMIT_AS=1048576", "RLIMIT_DATA=0", "RLIMIT_STACK=4096"])
@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_limits_its_waiter_ends_as_it_ended(place, way, limit):
    """The program sets a resource limit of its waiter's (its launcher, or its namespace's first
    process) to nothing, leaves 50 children that wait (deaf to SIGTERM), and exits 4: the call must report exit 4
    within its timeout."""
    (place / "root" / "limited.py").write_text(LIMITED)
    name, value = limit.split("=")
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": f"exec {PYTHON} -I limited.py {name} {value}", "timeout": 8}))
    print(text)
    assert text.startswith("exit_code: 4 ") and "forked" in text and "timed_out" not in text, text


@pytest.mark.parametrize("limit", ["RLIMIT_AS=1048576", "RLIMIT_DATA=0"])
@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_that_limits_its_waiters_memory_and_leaves_many_children_ends_as_it_ended(place, way, limit):
    """As above with 1000 children left: the waiter that lists them must allocate (a list of
    1000 names) under a memory limit of nothing; the call must still report exit 4."""
    (place / "root" / "limited.py").write_text(LIMITED)
    name, value = limit.split("=")
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": f"exec {PYTHON} -I limited.py {name} {value} 1000", "timeout": 15}))
    print(text)
    assert text.startswith("exit_code: 4 ") and "forked" in text and "timed_out" not in text, text


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_starts_with_sigpipe_and_sigxfsz_at_their_defaults(place, way):
    """A program starts with the signal dispositions a shell gives what it runs: a writer whose
    reader has gone is killed by SIGPIPE (status 141 in the shell), not told EPIPE; a write past
    RLIMIT_FSIZE kills by SIGXFSZ (the launcher, an interpreter, ignores both; an ignored signal
    stays ignored across exec)."""
    command = (
        "(yes; echo \"yes ended $?\" >&2) | head -n 1; "
        "(ulimit -f 0; sh -c 'echo x > big.txt'; echo \"write ended $?\" >&2); exit 4"
    )
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": command, "timeout": 10}))
    print(text)
    assert "yes ended 141" in text and "write ended 153" in text, text


CROSS = '''
import fcntl, os, signal, socket, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
targets = [int(each) for each in sys.argv[1:]]
done = []
for sig in (signal.SIGUSR2, signal.SIGUSR1, signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
    for target in targets:
        for pid in (target, -target):
            try:
                os.kill(pid, sig)
                done.append((sig.name, pid))
            except OSError as exc:
                pass
for target in targets:
    for pid in (target, -target):
        a, b = socket.socketpair()
        try:
            fcntl.fcntl(a, fcntl.F_SETOWN, pid)
            fcntl.fcntl(a, 10, signal.SIGUSR2)  # F_SETSIG
            fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
            b.send(b"x")
            done.append(("F_SETOWN", pid))
        except OSError as exc:
            print("F_SETOWN", pid, exc.strerror)
print("done", done, flush=True)
'''


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_cannot_change_the_end_of_another_calls_program(place, way):
    """Two calls at once: the second program, told the process ids of the first call's launcher,
    its namespace's first process and its program (a guess would find them: they are small
    numbers), signals, stops and kills each and each group (and through ``F_SETOWN`` on a socket
    of its own); the first program still ends as it ended (exit 3, after its output)."""
    (place / "root" / "cross.py").write_text(CROSS)
    first = f"sleep 1.5; echo {MARKER}-first; exit 3"
    ends = await _beside(place, way, first, "cross.py", timeout=10)
    assert ends["first"].startswith("exit_code: 3 ") and f"{MARKER}-first" in ends["first"], ends


CROSS_LIMIT = '''
import os, resource, sys
for target in map(int, sys.argv[1:]):
    for name in ("RLIMIT_NOFILE", "RLIMIT_AS", "RLIMIT_DATA"):
        try:
            resource.prlimit(target, getattr(resource, name), (0, 0))
            print("limited", target, name, flush=True)
        except OSError as exc:
            print("prlimit", target, name, exc.strerror, flush=True)
'''


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_cannot_limit_another_calls_launcher(place, way):
    """Two calls at once: the second program, told the process ids of the first call's launcher,
    its namespace's first process and its program, sets their RLIMIT_NOFILE, RLIMIT_AS and
    RLIMIT_DATA to 0. The first program (which leaves a child behind, deaf to SIGTERM, as a
    daemon's start may) ends with exit 3 at once and is reported so, within its timeout."""
    (place / "root" / "limit.py").write_text(CROSS_LIMIT)
    first = f"(trap '' TERM; exec sleep 30) & sleep 1.5; echo {MARKER}-first; exit 3"
    ends = await _beside(place, way, first, "limit.py", timeout=6)
    assert ends["first"].startswith("exit_code: 3 ") and "timed_out" not in ends["first"], ends


CROSS_FSIZE = '''
import os, resource, sys
for target in map(int, sys.argv[1:]):
    try:
        resource.prlimit(target, resource.RLIMIT_FSIZE, (0, 0))
        print("limited", target, flush=True)
    except OSError as exc:
        print("prlimit", target, exc.strerror, flush=True)
'''


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_cannot_end_another_calls_program_by_its_limits(place, way):
    """Two calls at once: the second program, told the first call's process ids, sets their
    RLIMIT_FSIZE to 0 (what a signal could not do, Landlock's scoping refusing it: change how the
    first program ends, by SIGXFSZ or EFBIG at its next write to a file). The first program
    writes a file (exit 5 if it cannot), prints and exits 3, and must be reported so."""
    (place / "root" / "fsize.py").write_text(CROSS_FSIZE)
    first = f"sleep 1.5; echo x > out.txt || exit 5; echo {MARKER}-first; exit 3"
    ends = await _beside(place, way, first, "fsize.py", timeout=6)
    assert ends["first"].startswith("exit_code: 3 ") and f"{MARKER}-first" in ends["first"], ends

@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_whose_children_fork_on_after_it_ends_as_it_ended(place, way):
    """A program that leaves behind processes that fork without pause (each child forking on,
    the parents dying: a chain the launcher must catch up with) exits 4 at once: reported as
    exiting 4, well before its timeout."""
    command = "( while :; do ( : ) & done ) & ( while :; do sh -c 'sleep 9 & exit 0'; done ) & sleep 0.2; echo a; exit 4"
    async with _serve(place, WAYS[way]) as client:
        text = text_of(await client.call_tool("run_shell", {"command": command, "timeout": 20}))
    print(text)
    assert text.startswith("exit_code: 4 ") and "timed_out" not in text, text


@pytest.fixture
def load() -> Iterator[None]:
    """Four busy loops running meanwhile (two cores): the programs' waiters run late."""
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(4)]
    try:
        yield
    finally:
        for each in loops:
            each.kill()
            each.wait()


@pytest.mark.parametrize("way", list(WAYS))
async def test_under_load_programs_that_signal_their_waiters_at_once_end_as_they_ended(place, way, load):
    """Under load, at once from its start (before its waiters run again), and three at a time:
    each program sends ending signals to its waiter by pid and to every process it may (its
    process group: see above), and exits with its own status; each is reported as it ended."""
    sends = "; ".join(f"kill -s {sig} {target}" for target in (WAITER[way], "-1") for sig in ("INT", "TERM", "HUP", "QUIT", "USR2", "ALRM"))
    seen: list[tuple[int, str]] = []
    async with _serve(place, WAYS[way]) as client:

        async def call(n: int) -> None:
            command = f"trap '' INT TERM HUP QUIT USR2 ALRM; {{ {sends}; }} 2>/dev/null; exit {n}"
            seen.append((n, text_of(await client.call_tool("run_shell", {"command": command, "timeout": 20}))))

        for batch in range(5):
            async with anyio.create_task_group() as tg:
                for n in range(3):
                    tg.start_soon(call, 1 + batch * 3 + n)
    wrong = [(n, text.splitlines()[0]) for n, text in seen if not text.startswith(f"exit_code: {n} ")]
    print(len(seen), wrong)
    assert len(seen) == 15 and not wrong, wrong
