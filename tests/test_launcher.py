"""The running launcher (``launch.py --serve``): one per server, forking a launcher for each
confined program. Each program still gets its own masks, listed at its start; a killed launcher
is replaced; a cancelled call takes its program's whole PID namespace with it; the launcher
ends with its server, even a killed one; and the program sees what a launcher interpreter of its
own would have given it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import fsmcp_shell.hooks
import pytest

from fsmcp.sandbox import landlock, launcher, masks
from fsmcp.sandbox.programs import SYSTEM_DIRS
from fsmcp.testing import alive, connect, host_for, processes_with, text_of

pytestmark = pytest.mark.anyio

MARKER = "MARKER-launcher-5c1e"
SHELL = {"allow": ["sh", "cat"], "allow_unconfined": True}


def _launchers() -> dict[int, int]:
    """Every running launcher on the machine (``launch.py --serve``): its pid, and its server's."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if masks.LAUNCHER.encode() in argv and b"--serve" in argv and state != "Z":
            found[int(entry)] = int(argv[argv.index(b"--serve") + 2])
    return found


@pytest.mark.parametrize("policy", ["on", "off"])
async def test_a_secret_moved_in_while_the_launcher_runs_is_hidden_from_the_next_program(tmp_path, policy):
    root = (tmp_path / "root").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("open\n")
    disable = [] if policy == "on" else ["secrets"]
    host = host_for([root], [("shell", fsmcp_shell.hooks)], sandbox="require", plugins={"shell": SHELL}, disable=disable)
    async with connect(host) as client:
        first = await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]})
        assert not first.is_error and "open" in text_of(first)
        running = launcher.SERVER.pid
        assert running is not None and running in _launchers()
        # Moved in (renamed from outside the roots' view of names) after the launcher started.
        staged = tmp_path / "staged"
        staged.write_text(f"TOKEN={MARKER}\n")
        os.rename(staged, root / "sub" / ".env")
        second = await client.call_tool("run_command", {"command": "sh", "args": ["-c", "cat sub/.env; echo done"]})
        assert launcher.SERVER.pid == running  # the same launcher started both
    text = text_of(second)
    assert "done" in text
    if policy == "on":
        assert MARKER not in text
    else:
        assert MARKER in text  # the control: the same call shows it when nothing is protected


async def test_a_killed_launcher_is_replaced(tmp_path):
    root = tmp_path.resolve()
    (root / "a.txt").write_text("alpha\n")
    host = host_for([root], [("shell", fsmcp_shell.hooks)], sandbox="require", plugins={"shell": SHELL})
    async with connect(host) as client:
        assert "alpha" in text_of(await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]}))
        killed = launcher.SERVER.pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        with anyio.fail_after(30):
            while killed in _launchers():
                await anyio.sleep(0.01)
        result = await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]})
        assert not result.is_error and "alpha" in text_of(result)
        assert launcher.SERVER.pid not in (None, killed)


async def test_cancelling_a_call_kills_its_programs_whole_namespace(tmp_path):
    """Even a process that left the program's session (``setsid``) ends: its PID namespace ends."""
    root = tmp_path.resolve()
    marker = f"987.{os.getpid():07}55"
    host = host_for([root], [("shell", fsmcp_shell.hooks)], sandbox="require", plugins={"shell": SHELL})
    try:
        async with connect(host) as client:
            scope = anyio.CancelScope()
            outcome = []

            async def run() -> None:
                with scope:
                    script = f"setsid sleep {marker} & sleep {marker} & wait"
                    outcome.append(await client.call_tool("run_command", {"command": "sh", "args": ["-c", script]}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                with anyio.fail_after(30):
                    while len(processes_with(marker)) < 2:
                        await anyio.sleep(0.02)
                sessions = {os.getsid(pid) for pid in processes_with(marker)}
                scope.cancel()
            assert outcome == []
            with anyio.fail_after(30):
                while processes_with(marker):
                    await anyio.sleep(0.02)
            assert launcher.SERVER.pid is not None  # the launcher itself lives on for the next program
        assert len(sessions) == 2, "setsid did not leave the session: the test shows nothing"
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)


def _serve(root: Path) -> subprocess.Popen[bytes]:
    config = root.parent / "fsmcp.toml"
    config.write_text('[plugins.shell]\nallow = ["cat"]\n')
    return subprocess.Popen(
        [sys.executable, "-m", "fsmcp", "serve", str(root), "--config", str(config), "--enable", "shell", "--sandbox", "require"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _say(server: subprocess.Popen[bytes], message: dict) -> dict | None:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
    return json.loads(server.stdout.readline()) if "id" in message else None


def _started_a_program(server: subprocess.Popen[bytes]) -> int:
    """Run one confined program in ``server``; its launcher's pid."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    assert "result" in _say(server, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    _say(server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "run_command", "arguments": {"command": "cat", "args": ["a.txt"]}}
    answer = _say(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    assert answer is not None and "alpha" in json.dumps(answer)
    mine = [pid for pid, of in _launchers().items() if of == server.pid]
    assert len(mine) == 1
    return mine[0]


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not alive(pid)


@pytest.mark.parametrize("end", ["hang up", "SIGKILL"])
def test_the_launcher_ends_with_its_server(tmp_path, end):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    server = _serve(root)
    try:
        running = _started_a_program(server)
        if end == "hang up":
            assert server.stdin is not None
            server.stdin.close()
            assert server.wait(60) == 0
        else:
            server.kill()
            server.wait(60)
        assert _gone(running), f"the launcher {running} outlived its server ({end})"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def _ruleset() -> int:
    rules = landlock.Ruleset(landlock.abi())
    rules.grant_each(SYSTEM_DIRS, landlock.RUN)
    rules.grant("/etc/ld.so.cache", landlock.READ_FILE)
    return rules.build()


def _interpreter(env: dict[str, str]) -> bytes:
    """What ``env`` prints started by a launcher interpreter of its own, as programs were before."""
    fd = _ruleset()
    try:
        argv = [sys.executable, "-I", "-S", masks.LAUNCHER, str(fd), "no-links", "-", "/usr/bin/env", "env", "-0"]
        return subprocess.run(argv, pass_fds=(fd,), env=env, capture_output=True, check=True).stdout
    finally:
        os.close(fd)


async def _forked(env: dict[str, str]) -> bytes:
    fd = _ruleset()
    status, told = os.pipe()
    try:
        process = await launcher.launch(
            "/usr/bin/env", ["env", "-0"], cwd="/", env=env, ruleset=fd, listing=None, status=told,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
    finally:
        os.close(fd)
        os.close(told)
    os.close(status)
    out = b""
    assert process.stdout is not None
    async for chunk in process.stdout:
        out += chunk
    assert await process.wait() == 0
    await process.aclose()
    return out


@pytest.mark.parametrize(
    "env", [{}, {"LANG": "C.UTF-8"}, {"LANG": "xx_YY.UTF-8"}, {"LC_ALL": "C"}, {"LC_CTYPE": "POSIX", "A": "b=c"}, {"PATH": "/usr/bin"}]
)
async def test_a_forked_launcher_gives_the_program_the_environment_an_interpreter_did(env):
    """Python's start sets LC_CTYPE where the locale is C (PEP 538), and the program inherited it."""
    assert await _forked(env) == _interpreter(env)


async def test_a_program_ends_as_it_ended_in_its_launcher(tmp_path):
    """Its exit status, or its signal, as the waiting ``Process`` reads it."""
    fd = _ruleset()
    try:
        for script, expected in (("exit 3", 3), ("kill -TERM $$", -signal.SIGTERM), ("exit 0", 0)):
            status, told = os.pipe()
            try:
                process = await launcher.launch(
                    "/bin/sh", ["sh", "-c", script], cwd="/", env={}, ruleset=fd, listing=None, status=told,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
            finally:
                os.close(told)
            os.close(status)
            assert await process.wait() == expected
            await process.aclose()
    finally:
        os.close(fd)


WAITED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@pytest.mark.parametrize("way", ["alone", "kept"])
def test_a_program_that_signals_its_waiter_before_the_waiter_runs_again_still_ends_as_it_ended(way):
    """The process that waits for the program (its PID namespace's first process, or with
    Landlock alone its launcher) may not run again after forking it until the program has
    signalled it (a loaded machine: a README run reported exit 127 for ``exit 4``). Here the
    waiter sleeps after each fork, so the program's signals always come first."""
    kills = "; ".join(f"kill -{each.name[3:]} {'1' if way == 'alone' else '$PPID'}" for each in WAITED)
    code = textwrap.dedent(
        f"""
        import os, sys, time
        sys.path.insert(0, {str(Path(masks.LAUNCHER).parent)!r})
        import launch
        fork = os.fork
        def fork_then_wait():
            pid = fork()
            if pid:
                time.sleep(0.5)  # the program runs first, and signals
            return pid
        os.fork = fork_then_wait
        if {way!r} == "alone":
            launch.enter_namespace()
            launch.alone("-")
        else:
            launch.kept("-")
        os.execv("/bin/sh", ["sh", "-c", {kills + "; exit 4"!r}])
        """
    )
    ended = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, timeout=60)
    assert ended.returncode == 4, ended.stderr.decode()


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_a_forked_servers_launcher_ends_with_it(tmp_path):
    """Servers forked by the test's fork server (``serve_stdio``) start launchers of their own,
    and leave none behind."""
    from fsmcp import testing

    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    config = tmp_path / "fsmcp.toml"
    config.write_text('[plugins.shell]\nallow = ["cat"]\n')
    async with testing.serve_stdio(str(root), "--config", str(config), "--enable", "shell", "--sandbox", "require") as client:
        result = await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]})
        assert "alpha" in text_of(result)
        forks = testing._fork_servers[os.getpid()][0].pid
        mine = [pid for pid, server in _launchers().items() if alive(server) and _parent(server) == forks]
        assert len(mine) == 1, mine
    with anyio.fail_after(30):
        while alive(mine[0]):
            await anyio.sleep(0.01)


def test_a_rule_added_in_the_view_never_grants_a_link_swapped_in(tmp_path):
    """The launcher adds the rules beneath an overlaid root once the overlay is mounted, by path:
    a directory swapped for a link on the way (by another program, another call) would have the
    rule granted to the link's target. Such a rule is left out."""
    from fsmcp.sandbox import launch

    real = tmp_path / "real"
    real.mkdir()
    (real / "f").write_text("granted\n")
    away = tmp_path / "away"
    away.mkdir()
    (away / "f").write_text("target\n")
    (tmp_path / "swapped").symlink_to(away)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        fd = _ruleset()
        launch.add_rules(fd, [(landlock.RUN, str(real)), (landlock.RUN, str(tmp_path / "swapped"))])
        launch.confine(fd)
        seen = []
        for path in (real / "f", away / "f"):
            try:
                seen.append(path.read_text().strip())
            except PermissionError:
                seen.append("denied")
        os.write(write, json.dumps(seen).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        seen = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert seen == ["granted", "denied"]
