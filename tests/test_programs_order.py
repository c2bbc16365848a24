"""Programs see a fixed set of hidden files: nothing the server does while one runs shows it a
protected file, and where only Landlock confines it, it cannot give one a new name either.

The attacks are a client's: a recursive grep started while the same client moves or copies a
directory holding a ``.env``, a shell that waits for one to be moved in, a shell that links
one to a plain name for the server's own ``read_file``. Everything is real: the server over
stdio with the SDK's client, the programs confined by this kernel, as root, as the
unprivileged user ``nobody``, and with Landlock alone (no user namespace).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from fsmcp.sandbox import masks
from fsmcp.testing import processes_with, serve_stdio, text_of

pytestmark = pytest.mark.anyio

MARKER = "MARKER-5c1e"
HERE = Path(__file__).parent
WITHOUT_USERNS = HERE / "without_userns.py"
AS_NOBODY = HERE / "as_nobody.py"
NOBODY = 65534
ROUNDS = {"root": 20, "nobody": 20, "landlock-alone": 60}
"""Rounds of each race, by way. With the order taken out (no change waits for a program, none
for a change), as root and as nobody about half the rounds show a leak or a refused start (one
run of 60 on a loaded machine: 51 and 36 as root, 36 and 24 as nobody, move/copy and
undo/batch), so 20 rounds miss it with a probability under 1e-4 (0.6^20 = 4e-5 at 24 of 60); at
20 rounds each of the four tests failed in 10 of 10 runs. With Landlock alone only 7 and 1
rounds of 60 did: it keeps its 60."""
WAYS = {"root": None, "nobody": AS_NOBODY, "landlock-alone": WITHOUT_USERNS}


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory every user may enter (``tmp_path`` lies under root's own 0700 directory)."""
    top = Path(tempfile.mkdtemp(prefix="fsmcp-order-", dir="/tmp")).resolve()
    top.chmod(0o755)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _seed(top: Path, as_nobody: bool) -> Path:
    root = top / "root"
    (root / "a").mkdir(parents=True)
    (root / "a" / ".env").write_text(f"TOKEN={MARKER}-secret\n")
    (root / "a" / "notes.txt").write_text("plain\n")
    (root / "open.txt").write_text(f"{MARKER}-public\n")
    (root / "other").mkdir()
    (top / "state").mkdir()
    (top / "fsmcp.toml").write_text('[plugins.shell]\nallow = ["grep", "cat"]\nallow_shell = true\n')
    if as_nobody:
        for path in [top / "state", root, *root.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    return root


def _serve(top: Path, root: Path, under: Path | None, enable: str = "shell,write,read"):
    return serve_stdio(
        str(root), "--config", str(top / "fsmcp.toml"), "--enable", enable,
        env={"XDG_STATE_HOME": str(top / "state")}, under=under,
    )


def _leaked(text: str) -> list[str]:
    return [line for line in text.splitlines() if MARKER in line and f"{MARKER}-public" not in line]


def _not_listed(name: str) -> str:
    """A shell test that ``name`` is not (yet) in the working directory, asked by listing it: in a
    program's copy-on-write view a name looked up and not found stays so (the overlay keeps its
    negative entry), while a listing shows what another process made since."""
    return f"! ls -a | grep -qx {name}"


def _running(started: anyio.Event):
    """A progress callback that sets ``started``: the first comes a second into the program's run."""

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    return progressed


async def _until(condition) -> None:
    with anyio.fail_after(60):  # generous: only a broken server takes long
        while not condition():
            await anyio.sleep(0.02)


async def _grep_racing(client, tool: str, arguments: dict) -> tuple[tuple[bool, str], tuple[bool, str]]:
    """One round: a recursive grep for the marker and ``tool`` called at once; each (is_error, text)."""
    seen: dict[str, tuple[bool, str]] = {}

    async def call(key: str, name: str, args: dict) -> None:
        result = await client.call_tool(name, args)
        seen[key] = (bool(result.is_error), text_of(result))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "grep", "run_command", {"command": "grep", "args": ["-r", MARKER, "."]})
        tg.start_soon(call, "change", tool, arguments)
    return seen["grep"], seen["change"]


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_grep_racing_a_move_or_a_copy_never_shows_the_moved_secret(place, way):
    root = _seed(place, way == "nobody")
    leaks: list[str] = []
    async with _serve(place, root, WAYS[way]) as client:
        who = text_of(await client.call_tool("run_shell", {"command": "id -u"}))
        assert who.startswith("exit_code: 0") and ("65534" in who) == (way == "nobody"), who
        for i in range(ROUNDS[way]):
            copy = i % 2 == 1
            tool, args = ("copy_file", {"source": "a", "destination": "c"}) if copy else ("move_file", {"source": "a", "destination": "b"})
            (error, text), changed = await _grep_racing(client, tool, args)
            assert not changed[0], changed
            assert not error and f"{MARKER}-public" in text, text
            leaks += [f"round {i}: {line}" for line in _leaked(text)]
            # Put the tree back between rounds, from outside the server (no call is running).
            if copy:
                shutil.rmtree(root / "c")
            else:
                os.rename(root / "b", root / "a")
    print(f"{way}: {len(leaks)} leaks in {ROUNDS[way]} rounds", *leaks, sep="\n")
    assert leaks == []


async def test_without_userns_a_secret_moved_in_while_a_shell_waits_stays_unseen(place):
    root = _seed(place, False)
    # The shell says it started, waits (a bounded number of times) for the directory to arrive, then reads it.
    script = "touch started; i=0; while [ ! -e other/a ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; cat other/a/.env other/a/notes.txt; echo done"
    seen: dict[str, tuple[bool, str]] = {}
    async with _serve(place, root, WITHOUT_USERNS) as client:

        async def shell() -> None:
            result = await client.call_tool("run_shell", {"command": script})
            seen["shell"] = (bool(result.is_error), text_of(result))

        async def move() -> None:
            await _until(lambda: (root / "started").exists() or "shell" in seen)  # the shell runs: the move comes while it waits
            result = await client.call_tool("move_file", {"source": "a", "destination": "other/a"})
            seen["move"] = (bool(result.is_error), text_of(result))

        async with anyio.create_task_group() as tg:
            tg.start_soon(shell)
            tg.start_soon(move)
    print(seen)
    assert not seen["move"][0] and (root / "other" / "a" / ".env").exists()
    assert "done" in seen["shell"][1]
    assert _leaked(seen["shell"][1]) == []


async def test_without_userns_a_program_cannot_give_a_secret_a_new_name(place):
    root = _seed(place, False)
    (root / "a" / "sub").mkdir()
    script = "cd a; ln .env h1; ln .env sub/h2; ln -s .env h3; mv .env h4; cat h1 sub/h2 h3 h4; ls; echo done"
    async with _serve(place, root, WITHOUT_USERNS) as client:
        shell = text_of(await client.call_tool("run_shell", {"command": script}))
        reads = [text_of(await client.call_tool("read_file", {"path": f"a/{name}"})) for name in ("h1", "sub/h2", "h3", "h4", ".env")]
    print(shell, *reads, sep="\n---\n")
    assert "done" in shell
    assert _leaked(shell) == []
    assert [line for text in reads for line in _leaked(text)] == []
    assert (root / "a" / ".env").read_text() == f"TOKEN={MARKER}-secret\n"


def test_the_launcher_refuses_a_listed_path_that_vanished_or_changed_type(place):
    root = _seed(place, False)
    for listed, why in (([f"{root}/gone/.env"], "No such file or directory"), ([f"{root}/a/"], "listed as a directory, it is a file now")):
        if listed == [f"{root}/a/"]:
            shutil.rmtree(root / "a")
            (root / "a").write_text("a file now\n")
        fd = masks.listing(listed)
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", masks.LAUNCHER, "-", str(fd), "-", "/bin/cat", "cat", str(root / "open.txt")],
                pass_fds=(fd,), capture_output=True, text=True,
            )
        finally:
            os.close(fd)
        print(done.returncode, done.stdout, done.stderr)
        assert done.returncode == 126 and done.stdout == ""
        assert "was not started" in done.stderr and why in done.stderr


@pytest.mark.parametrize("way", ["mounts", "landlock-alone"])
async def test_the_journal_inside_a_root_is_hidden_from_programs(place, way, monkeypatch, tmp_path):
    """The start refuses a journal inside a root (:mod:`fsmcp.paths.state`); were that check
    ever passed by, programs still do not see the journal's copies."""
    import fsmcp_shell.hooks
    import fsmcp_write.hooks

    from fsmcp.paths import state as journal_place, temporaries
    from fsmcp.sandbox import masks
    from fsmcp.testing import connect, host_for

    monkeypatch.setattr(journal_place, "prepare", lambda settings, roots: None)
    # The ledgers of temporary files would live in the journal, inside the root: elsewhere here.
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir(mode=0o700)
    monkeypatch.setattr(temporaries, "prepare", lambda roots, journal=None: ledgers)
    if way == "landlock-alone":
        monkeypatch.setattr(masks, "can_mount", lambda: False)
    root = _seed(place, False)
    (root / "kept.txt").write_text(f"{MARKER}-journal old text\n")
    host = host_for(
        [root], [("shell", fsmcp_shell.hooks), ("write", fsmcp_write.hooks)],
        journal=str(root / ".state" / "journal"), sandbox="require", plugins={"shell": {"allow_shell": True}},
    )
    async with connect(host) as client:
        await client.call_tool("write_file", {"path": "kept.txt", "content": "new text\n"})
        assert any(MARKER in p.read_text(errors="replace") for p in (root / ".state").rglob("*") if p.is_file())  # the journal kept it
        text = text_of(await client.call_tool("run_shell", {"command": "grep -r journal . ; ls -a .state .state/journal; echo done"}))
    print(text)
    assert "done" in text and f"{MARKER}-journal" not in text


async def test_a_change_waiting_for_a_program_gives_up_when_cancelled(tmp_path):
    import fsmcp_shell.hooks
    import fsmcp_write.hooks

    from fsmcp.paths.change import ORDER
    from fsmcp.testing import connect, host_for

    root = _seed(tmp_path, False)
    host = host_for([root], [("shell", fsmcp_shell.hooks), ("write", fsmcp_write.hooks)], sandbox="require", plugins={"shell": {"allow_shell": True}})
    # The shell runs until the test lets it end (at most 20 s).
    script = f"i=0; while {_not_listed('stop')} && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo ended"
    async with connect(host) as client:
        shell: dict[str, str] = {}
        scope = anyio.CancelScope()

        async def run() -> None:
            shell["text"] = text_of(await client.call_tool("run_shell", {"command": script}))

        async def move() -> None:
            with scope:
                await client.call_tool("move_file", {"source": "a", "destination": "b"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(30):
                while not host.runner.in_flight:
                    await anyio.sleep(0.01)
                tg.start_soon(move)
                while not ORDER._waiting:  # the move waits for the shell
                    await anyio.sleep(0.01)
                scope.cancel()
                while len(host.runner.in_flight) > 1 or ORDER._waiting:  # its worker gave up
                    await anyio.sleep(0.01)
            assert (root / "a" / ".env").exists() and not (root / "b").exists()
            (root / "stop").write_text("")
        assert "ended" in shell["text"]
        # With no program running, a change does not wait.
        with anyio.fail_after(30):
            result = await client.call_tool("move_file", {"source": "a", "destination": "b"})
        assert not result.is_error and (root / "b" / ".env").exists()


async def test_a_program_whose_hidden_files_changed_since_their_listing_is_not_started(tmp_path, monkeypatch):
    import fsmcp_shell.hooks

    from fsmcp.testing import connect, host_for

    root = _seed(tmp_path, False)
    listed = masks.protected

    def stale(roots, limit=masks.MAX_ENTRIES):  # as if a.env were moved away between the listing and the masks
        found = listed(roots, limit)
        os.rename(root / "a", root / "moved")
        return found

    monkeypatch.setattr(masks, "protected", stale)
    host = host_for([root], [("shell", fsmcp_shell.hooks)], sandbox="require", plugins={"shell": {"allow_shell": True}})
    async with connect(host) as client:
        result = await client.call_tool("run_shell", {"command": "echo ran > ran.txt; grep -r MARKER ."})
    text = text_of(result)
    print(text)
    assert result.is_error and text.startswith("PERMISSION_DENIED: /bin/sh was not started: it could not be confined")
    # The directory above the .env is held in place first: it is the path found missing.
    assert f"{root}/a: No such file or directory" in text and "Nothing ran" in text
    assert not (root / "ran.txt").exists()


async def test_a_batch_that_changes_then_runs_programs_is_not_held_by_its_own_change(tmp_path):
    import fsmcp_batch.hooks
    import fsmcp_shell.hooks
    import fsmcp_write.hooks

    from fsmcp.testing import connect, host_for

    root = _seed(tmp_path, False)
    load = [("batch", fsmcp_batch.hooks), ("shell", fsmcp_shell.hooks), ("write", fsmcp_write.hooks)]
    host = host_for([root], load, sandbox="require", plugins={"shell": {"allow_shell": True}})
    operations = [
        {"tool": "write_file", "arguments": {"path": "x.txt", "content": "written first\n"}},
        {"tool": "run_command", "arguments": {"command": "cat", "args": ["x.txt"]}},
        {"tool": "move_file", "arguments": {"source": "a", "destination": "b"}},
        {"tool": "run_shell", "arguments": {"command": "cat b/.env b/notes.txt"}},
    ]
    async with connect(host) as client:
        with anyio.fail_after(60):  # its own change done, each program starts at once
            result = await client.call_tool("batch_operations", {"operations": operations})
    text = text_of(result)
    print(text)
    assert not result.is_error and "written first" in text and "plain" in text
    assert _leaked(text) == [] and (root / "b" / ".env").exists()


async def test_a_call_starting_a_second_program_is_not_held_by_a_change_waiting_for_its_first(tmp_path):
    import fsmcp_write.hooks

    from fsmcp import ToolInput, hookimpl, start_program
    from fsmcp.paths.change import ORDER
    from fsmcp.testing import connect, host_for
    from fsmcp.api.tools import Tool

    root = _seed(tmp_path, False)

    async def run_true(ctx) -> None:
        process = await start_program(ctx, ["true"], cwd=str(root), env={"PATH": "/usr/bin:/bin"})
        await process.wait()
        await process.aclose()

    async def two(args: ToolInput, ctx) -> str:
        # A probe (as run_command's of sed --sandbox), then, once a change waits for it, the command.
        await run_true(ctx)
        while not ORDER._waiting:
            await anyio.sleep(0.01)
        await run_true(ctx)
        return "both ran"

    class Two:
        @hookimpl
        def fsmcp_register_tools(self, register):
            register(Tool("two_programs", "Two programs, one after the other.", ToolInput, two, starts_programs=True))

    host = host_for([root], [("two", Two()), ("write", fsmcp_write.hooks)], sandbox="require")
    seen: dict[str, str] = {}
    async with connect(host) as client:

        async def programs() -> None:
            seen["programs"] = text_of(await client.call_tool("two_programs", {}))

        async def move() -> None:  # a directory holding a .env: a change that waits for programs
            while not ORDER._programs:
                await anyio.sleep(0.01)
            seen["move"] = text_of(await client.call_tool("move_file", {"source": "a", "destination": "b"}))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(programs)
                tg.start_soon(move)
    print(seen)
    assert seen["programs"] == "both ran" and (root / "b" / ".env").exists()


# -- what does not wait: only a change that can bring a protected file into view is ordered ----------

# The shell waits (a bounded number of times) for the test to let it end.
WAITING = f"i=0; while {_not_listed('stop')} && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo ended $i"


@pytest.mark.parametrize("way", list(WAYS))
async def test_writing_and_editing_plain_files_does_not_wait_for_a_running_program(place, way):
    root = _seed(place, way == "nobody")
    (root / "plain.txt").write_text("before\n")
    if way == "nobody":
        os.chown(root / "plain.txt", NOBODY, NOBODY)
    seen: dict[str, tuple[bool, str]] = {}
    async with _serve(place, root, WAYS[way], "shell,write,read,edit") as client:

        started = anyio.Event()

        async def shell() -> None:
            result = await client.call_tool("run_shell", {"command": WAITING}, progress_callback=_running(started))
            seen["shell"] = (bool(result.is_error), text_of(result))

        async with anyio.create_task_group() as tg:
            tg.start_soon(shell)
            try:
                await _until(lambda: started.is_set() or "shell" in seen)
                calls = [
                    ("write_file", {"path": "new.txt", "content": "written\n"}),
                    ("edit_file", {"path": "plain.txt", "edits": [{"old_text": "before", "new_text": "after"}]}),
                    ("append_file", {"path": "plain.txt", "content": "appended\n"}),
                    ("delete_file", {"path": "new.txt"}),
                ]
                for tool, args in calls:
                    result = await client.call_tool(tool, args)
                    seen[tool] = (bool(result.is_error), text_of(result))
                # Each returned while the program still ran: none waited for it.
                running = "shell" not in seen
            finally:
                (root / "stop").write_text("")
    print(way, seen)
    assert running, seen
    for tool, _ in calls:
        assert not seen[tool][0], seen[tool]
    assert (root / "plain.txt").read_text() == "after\nappended\n" and not (root / "new.txt").exists()
    assert seen["shell"][1].startswith("exit_code: 0") and "ended" in seen["shell"][1]


async def test_a_program_starts_while_another_sessions_long_write_batch_is_under_way(tmp_path):
    import threading

    import fsmcp_shell.hooks
    import fsmcp_write.hooks

    from fsmcp import hookimpl
    from fsmcp.testing import connect, host_for

    root = _seed(tmp_path, False)
    reached, release = threading.Event(), threading.Event()

    class Held:
        """Holds the batch at its third file until the test lets it go: a long batch, made deterministic."""

        @hookimpl
        def fsmcp_before_change(self, change, paths, fs, settings):
            if change.tool == "write_files" and any(p.path.name == "f2.txt" for p in paths):
                reached.set()
                release.wait(120)

    load = [("held", Held()), ("shell", fsmcp_shell.hooks), ("write", fsmcp_write.hooks)]
    host = host_for([root], load, sandbox="require", plugins={"shell": {"allow_shell": True}})
    files = [{"path": f"f{i}.txt", "content": f"{i}\n"} for i in range(5)]
    seen: dict[str, tuple[bool, str]] = {}
    async with connect(host) as writer, connect(host) as runner:

        async def batch() -> None:
            result = await writer.call_tool("write_files", {"files": files})
            seen["batch"] = (bool(result.is_error), text_of(result))

        async with anyio.create_task_group() as tg:
            tg.start_soon(batch)
            try:
                await _until(reached.is_set)
                with anyio.fail_after(60):  # on the old code the program waits for the whole batch: here, for ever
                    result = await runner.call_tool("run_shell", {"command": "cat f0.txt; echo ran"})
                seen["shell"] = (bool(result.is_error), text_of(result))
                held = not release.is_set() and "batch" not in seen
            finally:
                release.set()
    print(seen)
    assert held and not seen["shell"][0] and "ran" in seen["shell"][1], seen
    assert not seen["batch"][0] and all((root / f"f{i}.txt").read_text() == f"{i}\n" for i in range(5)), seen


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_grep_racing_an_undo_or_a_batch_that_brings_a_secret_back_never_shows_it(place, way):
    """The changes still ordered when others are not: a tree put back by undo_change (through its
    staging directory), and a batch whose first step (a plain write) waits for nothing but whose
    second (moving a directory holding a .env) does."""
    root = _seed(place, way == "nobody")
    leaks: list[str] = []
    refused: list[str] = []
    async with _serve(place, root, WAYS[way], "shell,write,read,history,batch") as client:
        for i in range(ROUNDS[way]):
            undo = i % 2 == 0
            if undo:  # moved away with no program running: the undo brings a/.env back
                moved = await client.call_tool("move_file", {"source": "a", "destination": "b"})
                assert not moved.is_error, text_of(moved)
                tool, args = "undo_change", {}
            else:
                steps = [
                    {"tool": "write_file", "arguments": {"path": "x.txt", "content": f"round {i}\n"}},
                    {"tool": "move_file", "arguments": {"source": "a", "destination": "b"}},
                ]
                tool, args = "batch_operations", {"operations": steps}
            (error, text), changed = await _grep_racing(client, tool, args)
            assert not changed[0], changed
            if error:  # the launcher's own check caught a change made while it hid the listed files
                refused.append(f"round {i}: {text}")
            else:
                assert f"{MARKER}-public" in text, text
            leaks += [f"round {i}: {line}" for line in _leaked(text)]
            if not undo:  # put the tree back from outside the server (no call is running)
                os.rename(root / "b", root / "a")
            assert (root / "a" / ".env").exists() and not (root / "b").exists()
    print(f"{way}: {len(leaks)} leaks, {len(refused)} programs refused in {ROUNDS[way]} rounds", *leaks, *refused, sep="\n")
    assert leaks == [] and refused == []


async def test_a_call_that_waited_its_turn_for_a_snapshot_alone_lets_programs_start_after_it(tmp_path):
    import fsmcp_batch.hooks
    import fsmcp_shell.hooks
    import fsmcp_write.hooks

    from fsmcp.paths.change import ORDER
    from fsmcp.testing import connect, host_for

    root = _seed(tmp_path, False)
    load = [("batch", fsmcp_batch.hooks), ("shell", fsmcp_shell.hooks), ("write", fsmcp_write.hooks)]
    host = host_for([root], load, sandbox="require", plugins={"shell": {"allow_shell": True}})
    # a/ is saved for the rollback (a tree: the call waits its turn), then the move is refused
    # before it announces any path, and the rollback puts a/ back.
    steps = [{"tool": "move_file", "arguments": {"source": "a", "destination": "a/inner"}}]
    async with connect(host) as client:
        batch = await client.call_tool("batch_operations", {"operations": steps, "transactional": True})
        assert not ORDER._changes, ORDER._changes
        with anyio.fail_after(60):  # left in the order, it would hold every program back for ever
            result = await client.call_tool("run_command", {"command": "cat", "args": ["a/notes.txt"]})
    print(text_of(batch), text_of(result), sep="\n---\n")
    assert "into itself" in text_of(batch) and not result.is_error and "plain" in text_of(result)


@pytest.mark.parametrize("way", ["root", "landlock-alone"])
async def test_a_protected_file_written_while_a_program_runs_waits_for_it(place, way):
    """Where the operator lets tools write protected files, a new one is not hidden from a
    program already running (it was not there to be listed): its write waits for the program."""
    root = _seed(place, False)
    config = place / "fsmcp.toml"
    config.write_text(config.read_text() + "\n[plugins.secrets]\nallow_write = true\n")
    # The shell looks (bounded) for the new .env, and reads it if it comes.
    script = "i=0; while ! ls -a c | grep -qx .env && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; cat c/.env; echo done $i"
    seen: dict[str, tuple[bool, str]] = {}
    async with _serve(place, root, WAYS[way]) as client:
        started = anyio.Event()

        async def shell() -> None:
            result = await client.call_tool("run_shell", {"command": script}, progress_callback=_running(started))
            seen["shell"] = (bool(result.is_error), text_of(result))

        async with anyio.create_task_group() as tg:
            tg.start_soon(shell)
            await _until(lambda: started.is_set() or "shell" in seen)
            result = await client.call_tool("write_file", {"path": "c/.env", "content": f"TOKEN={MARKER}-written\n"})
            seen["write"] = (bool(result.is_error), text_of(result))
    print(seen)
    assert not seen["write"][0] and (root / "c" / ".env").exists(), seen
    assert "done" in seen["shell"][1] and _leaked(seen["shell"][1]) == []


@pytest.mark.parametrize("way", list(WAYS))
async def test_a_program_cannot_carry_a_hidden_file_away_from_its_protected_name(place, way):
    """A mask hides a protected file at its path; a program that renames a directory above it
    (``.aws`` → ``aws``, or ``a`` into a root whose secrets policy is off) would leave the file,
    on the disk, under a name no policy protects, for the server's own ``read_file``. The
    directories above a hidden file stay where they are while the program runs."""
    root = _seed(place, way == "nobody")
    (root / ".aws").mkdir()
    (root / ".aws" / "credentials").write_text(f"key={MARKER}-aws\n")
    off = place / "off"
    off.mkdir()
    if way == "nobody":
        for path in (root / ".aws", root / ".aws" / "credentials", off):
            os.chown(path, NOBODY, NOBODY)
    config = place / "fsmcp.toml"
    config.write_text(config.read_text() + f'[plugins.secrets.roots."{off}"]\nenabled = false\n')
    command = f"mv .aws aws; mv a {off}/a; mv a/.env e; echo done"
    async with serve_stdio(
        str(root), str(off), "--config", str(config), "--enable", "shell,write,read",
        env={"XDG_STATE_HOME": str(place / "state")}, under=WAYS[way],
    ) as client:
        shell = text_of(await client.call_tool("run_shell", {"command": command}))
        reads = [text_of(await client.call_tool("read_file", {"path": str(path)})) for path in (root / "aws" / "credentials", off / "a" / ".env", root / "e")]
    print(shell, *reads, sep="\n")
    assert "done" in shell
    assert not any(MARKER in text for text in reads), reads
    assert (root / ".aws" / "credentials").read_text() == f"key={MARKER}-aws\n" and (root / "a" / ".env").exists()


async def test_a_directory_past_path_max_stops_programs_rather_than_show_them_its_files(place):
    """The walk for protected files reads each directory by its path: one moved past PATH_MAX
    (the server's own move_file takes a name up to it) was skipped, and a program walking by
    descriptor (grep -r) read the .env in it. What such a directory holds is not known, so it is
    hidden whole, which the launcher cannot do past PATH_MAX: the program is not started."""
    root = _seed(place, False)
    (root / "app" / "config").mkdir(parents=True)
    (root / "app" / "config" / ".env").write_text(f"TOKEN={MARKER}-deep\n")
    # A chain of directories 4,088 bytes long: app moved to its end still has a name the server
    # takes (4,092 bytes), app/config lies past PATH_MAX.
    chain, fd = str(root / "deep"), os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir("deep", dir_fd=fd)
    fd, old_fd = os.open("deep", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
    os.close(old_fd)
    while len(chain) < 4088:
        part = "d" * min(200, 4088 - len(chain) - 1)
        os.mkdir(part, dir_fd=fd)
        fd, old_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
        os.close(old_fd)
        chain += "/" + part
    os.close(fd)
    async with _serve(place, root, None) as client:
        moved = await client.call_tool("move_file", {"source": "app", "destination": f"{chain}/app"})
        assert not moved.is_error, text_of(moved)
        result = await client.call_tool("run_command", {"command": "grep", "args": ["-r", MARKER, "deep"]})
    text = text_of(result)
    assert f"{MARKER}-deep" not in text, text
    assert result.is_error and "was not started" in text and "File name too long" in text, text


async def test_a_directory_a_program_made_unreadable_is_hidden_whole_from_the_next(place):
    """Run as nobody, the server cannot read a directory a program made mode 000; the walk
    skipped it ("unreadable to the server, to its programs too"), and the next program, its
    owner, made it readable again and read the .env in it. It is hidden whole instead."""
    root = _seed(place, True)
    async with _serve(place, root, AS_NOBODY) as client:
        await client.call_tool("run_shell", {"command": "chmod 000 a"})
        after = text_of(await client.call_tool("run_shell", {"command": "chmod 755 a; cat a/.env; echo done"}))
    os.chmod(root / "a", 0o755)
    print(after)
    assert "done" in after and f"{MARKER}-secret" not in after, after


async def test_protected_names_hold_whatever_root_the_program_sees(place):
    """Names are matched from the operator's root, as the tools match them: a client's MCP root
    narrowed to ``R/.aws``, or an operator root nested at ``R/.aws``, leaves ``credentials``
    protected as ``**/.aws/credentials``, for programs and tools alike."""
    from mcp import types

    root = _seed(place, False)
    (root / ".aws").mkdir()
    (root / ".aws" / "credentials").write_text(f"key={MARKER}-aws\n")

    async def narrowed(context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{root}/.aws")])

    texts = []
    async with serve_stdio(
        str(root), "--config", str(place / "fsmcp.toml"), "--enable", "shell,read",
        env={"XDG_STATE_HOME": str(place / "state")}, list_roots_callback=narrowed,
    ) as client:
        texts.append(text_of(await client.call_tool("run_shell", {"command": "cat credentials; grep -r key ."})))
        texts.append(text_of(await client.call_tool("read_file", {"path": str(root / ".aws" / "credentials")})))
    async with serve_stdio(  # operator roots R and R/.aws
        str(root), str(root / ".aws"), "--config", str(place / "fsmcp.toml"), "--enable", "shell,read",
        env={"XDG_STATE_HOME": str(place / "state")},
    ) as client:
        texts.append(text_of(await client.call_tool("read_file", {"path": str(root / ".aws" / "credentials")})))
        texts.append(text_of(await client.call_tool("run_shell", {"command": f"cd {root}/.aws && cat credentials"})))
    print(*texts, sep="\n")
    assert not any(f"{MARKER}-aws" in text for text in texts), texts


@pytest.mark.parametrize(("way", "change"), [("root", "copy_file"), ("nobody", "copy_file"), ("landlock-alone", "move_file")])
async def test_what_a_program_leaves_behind_ends_with_it(place, way, change):
    """A process that leaves the program's process group (setsid) outlived its call and its
    place in the order, and read the .env of a directory the server copied (with Landlock alone,
    moved) afterwards. Each program runs in a PID namespace of its own, or without namespaces
    below its launcher as subreaper: what it leaves behind ends with it."""
    root = _seed(place, way == "nobody")
    mark = f"left-behind-{place.name}"  # its $0: what the test finds it by
    # The program ends once what it leaves behind has started, or could not leave the group (setsid refused).
    left = (
        f"setsid sh -c 'touch left; sleep 2; echo alive > alive.txt; cat other/b/.env > loot.txt' {mark} </dev/null >/dev/null 2>&1 & "
        "i=0; while [ ! -e left ] && kill -0 $! 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo started"
    )
    async with _serve(place, root, WAYS[way]) as client:
        started = text_of(await client.call_tool("run_shell", {"command": left}))
        changed = await client.call_tool(change, {"source": "a", "destination": "other/b"})
        await _until(lambda: not processes_with(mark))  # had it lived on, it has read and written by now
    print(started, text_of(changed), sep="\n")
    assert not changed.is_error
    assert not (root / "alive.txt").exists() and not (root / "loot.txt").exists()


OPEN_TREE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
clone = libc.syscall(428, -100, b".", 1 | os.O_CLOEXEC)  # open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE)
print("open_tree", clone, os.strerror(ctypes.get_errno()))
if clone >= 0:
    print(os.read(os.open("a/.env", os.O_RDONLY, dir_fd=clone), 200))
"""


async def test_a_program_cannot_copy_the_roots_tree_without_its_masks(place):
    """A program run as root keeps its capabilities in the user namespace the masks were mounted
    in: a non-recursive open_tree clone of the root's mount carried none of them, and the .env
    read through it was the real one. The new mount API is refused to programs."""
    root = _seed(place, False)
    async with _serve(place, root, None) as client:
        text = text_of(await client.call_tool("run_shell", {"command": f"/usr/bin/python3 -I -c '{OPEN_TREE}'; echo done"}))
    print(text)
    assert "done" in text and "open_tree -1 Operation not permitted" in text and f"{MARKER}-secret" not in text


async def test_a_root_that_is_itself_a_protected_directory_keeps_its_files_protected(place):
    """With the operator's only root at ``X/.aws``, the file was just ``credentials`` there,
    which ``**/.aws/credentials`` did not match: every tool and program read it. Names are
    matched from the file system's root as well as from each root holding the path."""
    aws = place / "home" / ".aws"
    aws.mkdir(parents=True)
    (aws / "credentials").write_text(f"key={MARKER}-aws\n")
    (place / "state").mkdir()
    (place / "fsmcp.toml").write_text('[plugins.shell]\nallow = ["grep", "cat"]\nallow_shell = true\n')
    async with _serve(place, aws, None) as client:
        texts = [
            text_of(await client.call_tool("read_file", {"path": "credentials"})),
            text_of(await client.call_tool("run_command", {"command": "cat", "args": ["credentials"]})),
            text_of(await client.call_tool("run_shell", {"command": "cat credentials; grep -r key ."})),
        ]
    print(*texts, sep="\n")
    assert not any(f"{MARKER}-aws" in text for text in texts), texts


async def test_with_landlock_alone_no_process_leaves_the_group_a_timeout_kills(place):
    """A shell that ignores SIGTERM runs past its timeout; the server kills its process group,
    the launcher (the subreaper) with it, and a process that had left the group (setsid)
    outlived the call and read what the server moved in next. Without namespaces no program
    leaves its process group."""
    root = _seed(place, False)
    mark = f"left-behind-{place.name}"  # its $0: what the test finds it by
    left = f"trap '' TERM; setsid sh -c 'sleep 6; echo alive > alive.txt; cat other/b/.env > loot.txt' {mark} </dev/null >/dev/null 2>&1 & sleep 30"
    async with _serve(place, root, WAYS["landlock-alone"]) as client:
        ran = text_of(await client.call_tool("run_shell", {"command": left, "timeout": 1}))
        moved = await client.call_tool("move_file", {"source": "a", "destination": "other/b"})
        await _until(lambda: not processes_with(mark))  # had it lived on, it has read and written by now
    print(ran, text_of(moved), sep="\n")
    assert not moved.is_error
    assert not (root / "alive.txt").exists() and not (root / "loot.txt").exists()
