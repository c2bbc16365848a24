"""What a start does with the pending directories of calls cut short: finishes those whose
process is gone (told by a lock, not a pid), once, even with two starts at once; removes those
that fail their checks, saying so.

Each pending directory here is a real one: a process writing 10 files through the host is
killed (SIGKILL, by a change hook that runs after the journal's) as it is about to write the
fifth; it is forked from the fork server (``forked_python``), which spares it an interpreter's
start and the imports (2.5 CPU-s a process). The lock of a live process is held by ``flock(1)``,
a process of the test's own. The servers started over stdio are forked from it too.
"""

from __future__ import annotations

import json
import logging
import errno
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from fsmcp.testing import forked, forked_python, host_for

FILES = 10
KILLER = """
import asyncio, os, signal, sys, types
from fsmcp import hookimpl
from fsmcp.testing import host_for

root, journal = sys.argv[1], sys.argv[2]
killer = types.ModuleType("killer")

@hookimpl(trylast=True)  # after the journal has recorded the path: the write is next
def fsmcp_before_change(change, paths):
    if any(p.path.name == "f04.txt" for p in paths):
        os.kill(os.getpid(), signal.SIGKILL)

killer.fsmcp_before_change = fsmcp_before_change
host = host_for([root], [("killer", killer)], entry_points=True, journal=journal)
files = [{"path": f"f{i:02}.txt", "content": f"new {i}\\n"} for i in range(10)]
asyncio.run(host.runner.call("write_files", {"files": files}))
"""


def kill_midway(root: Path, journal: Path, killer: str = KILLER) -> None:
    """``killer`` run on ``root`` and ``journal``, which it kills itself in."""
    done = subprocess.run(forked_python(killer, str(root), str(journal)), capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()


@pytest.fixture
def killed(tmp_path: Path) -> tuple[Path, Path]:
    """A root whose 10-file write was cut short after 4 files, and its journal with the pending directory."""
    root, journal = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    for i in range(FILES):
        (root / f"f{i:02}.txt").write_text(f"old {i}\n" * 100)
    kill_midway(root, journal)
    assert [(root / f"f{i:02}.txt").read_text().startswith("new") for i in range(FILES)] == [True] * 4 + [False] * 6
    return root, journal


def calls(journal: Path) -> list[Path]:
    return [p for p in (journal / "pending").iterdir() if not p.name.endswith(".lock")]


def start(root: Path, journal: Path, caplog: pytest.LogCaptureFixture, **settings) -> tuple[object, list[str]]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="fsmcp"):
        host = host_for([root], entry_points=True, journal=str(journal), **settings)
    # What the journal said; the killed process's temporaries (its snapshot store) are another's to say.
    return host, [r.getMessage() for r in caplog.records if r.name != "fsmcp.temporaries"]


def olds(root: Path) -> bool:
    return all((root / f"f{i:02}.txt").read_text() == f"old {i}\n" * 100 for i in range(FILES))


@pytest.mark.anyio
async def test_a_live_process_keeps_its_pending_directory_and_a_dead_one_is_recovered(killed, caplog):
    root, journal = killed
    [pending] = calls(journal)
    token = pending.name.rsplit("-", 1)[0]
    # A live process holds the dead one's lock: its directory is left alone.
    holder = subprocess.Popen(["flock", str(journal / "pending" / f"{token}.lock"), "sleep", "600"], start_new_session=True)
    try:
        for _ in range(1000):  # until flock(1) holds it; bounded by count
            probe = subprocess.run(["flock", "-n", str(journal / "pending" / f"{token}.lock"), "true"])
            if probe.returncode != 0:
                break
            threading.Event().wait(0.01)
        host, said = start(root, journal, caplog)
        assert calls(journal) == [pending] and not said
        assert "No changes" in (await host.runner.call("list_changes", {}))["content"][0]["text"]
    finally:
        os.killpg(holder.pid, signal.SIGKILL)  # flock(1) and its sleep, which holds the lock too
        holder.wait()
    host, said = start(root, journal, caplog)
    assert len(said) == 1 and "was cut short" in said[0] and "undo_change 1" in said[0], said
    assert os.listdir(journal / "pending") == []
    listed = (await host.runner.call("list_changes", {}))["content"][0]["text"]
    assert "interrupted" in listed and "f00.txt" in listed and "f09.txt" not in listed, listed
    assert not (await host.runner.call("undo_change", {"id": 1}))["isError"]
    assert olds(root)


@pytest.mark.anyio
async def test_a_pid_alone_does_not_keep_a_pending_directory(killed, caplog):
    root, journal = killed
    [pending] = calls(journal)
    # The dead process's pid given to a live one (this test's): the directory is recovered all the same.
    token = pending.name.rsplit("-", 1)[0]
    mine = f"{os.getpid()}-{token.split('-')[1]}"
    os.rename(journal / "pending" / f"{token}.lock", journal / "pending" / f"{mine}.lock")
    os.rename(pending, journal / "pending" / f"{mine}-{pending.name.rsplit('-', 1)[1]}")
    host, said = start(root, journal, caplog)
    assert len(said) == 1 and "was cut short" in said[0], said
    assert os.listdir(journal / "pending") == []


def test_two_starts_at_once_recover_it_once(killed, caplog):
    root, journal = killed
    hosts: list[object] = []
    threads = [threading.Thread(target=lambda: hosts.append(host_for([root], entry_points=True, journal=str(journal)))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(hosts) == 2
    assert len(os.listdir(journal / "changes")) == 1
    assert os.listdir(journal / "pending") == []


@pytest.mark.parametrize(
    "tamper, why",
    [
        (lambda intent, records, data: records[0]["record"].update(copy="../../../outside"), "saved copy is not a name"),
        (lambda intent, records, data: records.append({"run": "rm -rf /"}), "a line the journal does not write"),
        (lambda intent, records, data: intent.update(session="someone"), "session"),
        (lambda intent, records, data: intent.update(transactional="yes"), "transactional"),
        (lambda intent, records, data: [(data / n).write_text("other bytes") for n in os.listdir(data)], "not the one recorded"),
    ],
)
def test_a_pending_directory_that_fails_its_checks_is_removed_and_said(killed, caplog, tamper, why):
    root, journal = killed
    [pending] = calls(journal)
    intent = json.loads((pending / "intent.json").read_text())
    records = [json.loads(line) for line in (pending / "records").read_text().splitlines()]
    tamper(intent, records, pending / "data")
    (pending / "intent.json").write_text(json.dumps(intent))
    (pending / "records").write_text("".join(json.dumps(r) + "\n" for r in records))
    (journal / "pending" / "planted").mkdir()
    host, said = start(root, journal, caplog)
    assert any("planted, which the journal does not make" in line for line in said), said
    assert any("fails its checks" in line and why in line for line in said), said
    assert os.listdir(journal / "pending") == []
    assert not (journal / "changes").exists() or os.listdir(journal / "changes") == []
    assert olds(root) is False  # nothing was put back from a copy that failed its checks


def test_a_pending_directory_without_intent_is_removed(tmp_path: Path, caplog):
    root, journal = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    journal.mkdir(mode=0o700)
    (journal / "pending" / "1-0123456789ab-0123456789ab" / "data").mkdir(parents=True)
    host, said = start(root, journal, caplog)
    assert os.listdir(journal / "pending") == [] and not said



def test_a_stdio_start_recovers_before_it_serves_and_says_so(killed, tmp_path: Path):
    root, journal = killed
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    serve = forked("serve", "--journal", str(journal), str(root))
    hello = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}) + "\n"  # fmt: skip
    # A start of the same configuration fills the tool-list cache, from which a start answers
    # without loading the host (no tool call here either).
    warm = forked("serve", "--journal", str(journal), str(root))
    pending = calls(journal)
    moved = tmp_path / "aside"
    os.rename(journal / "pending", moved)
    done = subprocess.run(warm, input=hello.encode(), capture_output=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr.decode()
    shutil.rmtree(journal / "pending", ignore_errors=True)
    os.rename(moved, journal / "pending")
    assert calls(journal) == pending
    done = subprocess.run(serve, input=hello.encode(), capture_output=True, timeout=120, env=env)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "fsmcp: warning: change 1 (write_files) was cut short" in err and "undo_change 1" in err, err
    assert os.listdir(journal / "pending") == []
    assert (journal / "changes").is_dir() and len(os.listdir(journal / "changes")) == 1


def test_a_server_that_ends_leaves_nothing_in_pending(tmp_path: Path):
    root, journal = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}},
    ]
    proc = subprocess.Popen(forked("serve", "--journal", str(journal), str(root)), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate("".join(json.dumps(m) + "\n" for m in lines).encode(), timeout=120)
    assert proc.returncode == 0, err.decode()
    assert b'"id":1' in out and (root / "a.txt").read_text() == "a"
    assert len(os.listdir(journal / "changes")) == 1
    assert os.listdir(journal / "pending") == []


@pytest.mark.parametrize("planted", [["1-000000000000.lock", "1-000000000000-000000000000"], [".000000000000.lock-new"]])
@pytest.mark.anyio
async def test_an_entry_that_cannot_be_read_does_not_stop_the_others(killed, caplog, planted):
    # A directory where a lock is expected (EISDIR on its opening): that entry alone is said, every start.
    root, journal = killed
    for name in planted:
        (journal / "pending" / name).mkdir()
    host, said = start(root, journal, caplog)
    assert any("change 1 (write_files) was cut short" in line for line in said), said
    assert "f00.txt" in (await host.runner.call("list_changes", {}))["content"][0]["text"]
    assert not (await host.runner.call("undo_change", {"id": 1}))["isError"]
    assert olds(root)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("plant", ["records", "intent.json", "meta.json"])
@pytest.mark.anyio
async def test_deeply_nested_json_in_the_journal_is_damage_not_a_crash(killed, caplog, plant):
    # 100,000 levels exhaust a recursive parser: the entry is damaged, the rest of the journal works.
    root, journal = killed
    if plant == "meta.json":
        host, said = start(root, journal, caplog)  # change 1 recorded first; then a planted change 2
        (journal / "changes" / "0000000002-0").mkdir(mode=0o700)
        (journal / "changes" / "0000000002-0" / "meta.json").write_text(DEEP)
        listed = (await host.runner.call("list_changes", {}))["content"][0]["text"]
        assert "f00.txt" in listed and "2" in listed, listed
        done = await host.runner.call("undo_change", {"id": 2})
        assert done["isError"] and "RecursionError" not in done["content"][0]["text"], done
        assert not (await host.runner.call("undo_change", {"id": 1}))["isError"]
        assert olds(root)
        return
    planted = journal / "pending" / "999999-aaaaaaaaaaaa-bbbbbbbbbbbb"
    (planted / "data").mkdir(parents=True)
    intent = {"time": 1.0, "tool": "write_file", "session": None, "transactional": False}
    (planted / "intent.json").write_text(DEEP if plant == "intent.json" else json.dumps(intent))
    if plant == "records":
        (planted / "records").write_text(DEEP + "\n")
    host, said = start(root, journal, caplog)
    assert any("change 1 (write_files) was cut short" in line for line in said), said
    assert any("999999-aaaaaaaaaaaa-bbbbbbbbbbbb, an interrupted change that fails its checks" in line for line in said), said
    assert not (await host.runner.call("undo_change", {"id": 1}))["isError"]
    assert olds(root)


def test_a_bad_record_of_a_ledger_does_not_stop_its_others(tmp_path: Path):
    # A line nested 100,000 deep, then a set-aside file whose recorded name is too long for the
    # system (ENAMETOOLONG): the start goes on, and the ledger's later temporary is removed.
    root, journal = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    (journal / "temporaries").mkdir(parents=True, mode=0o700)
    journal.chmod(0o700)
    where = {"dir": str(root), "ddev": root.stat().st_dev, "dino": root.stat().st_ino}
    aside, tmp = root / ".a.txt.0123456789ab.fsmcp-tmp", root / ".b.txt.0123456789ab.fsmcp-tmp"
    aside.write_text("T")
    tmp.write_text("T")
    st = aside.lstat()
    lines = [
        DEEP,
        json.dumps({"id": 1, "t": "aside", **where, "name": aside.name, "from": "x" * 300, "dev": st.st_dev, "ino": st.st_ino, "fmt": 0o100000, "born": None}),
        json.dumps({"id": 2, "t": "tmp", **where, "name": tmp.name}),
    ]
    (journal / "temporaries" / "999999-aaaaaaaaaaaa.ledger").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(forked("serve", "--journal", str(journal), str(root)), input=b"", capture_output=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr.decode()[-600:]
    assert not tmp.exists(), done.stderr.decode()[-600:]


@pytest.mark.parametrize("transactional", [False, True])
@pytest.mark.anyio
async def test_a_directory_swapped_for_a_link_keeps_the_interrupted_change(tmp_path: Path, caplog, transactional):
    # Killed after 4 of 10 files of sub/ were written; then sub moved to sub2 and a link put as sub.
    # The change can neither be checked nor undone through the link: it is kept, said why, for later.
    root, journal = tmp_path / "root", tmp_path / "journal"
    (root / "sub").mkdir(parents=True)
    for i in range(FILES):
        (root / "sub" / f"f{i:02}.txt").write_text(f"old {i}\n" * 100)
    killer = KILLER.replace('"path": f"f{i:02}.txt"', '"path": f"sub/f{i:02}.txt"')
    if transactional:  # a transactional batch, which recovery would roll back if it could
        killer = killer.replace('host.runner.call("write_files", {"files": files})', 'host.runner.call("batch_operations", {"transactional": True, '
                                '"operations": [{"tool": "write_file", "arguments": f} for f in files]})')
    kill_midway(root, journal, killer)
    os.rename(root / "sub", root / "sub2")
    os.symlink("sub2", root / "sub")
    host, said = start(root, journal, caplog)
    assert any("change 1 (" in line and "cut short" in line and "symbolic link" in line for line in said), said
    assert [(root / "sub2" / f"f{i:02}.txt").read_text().startswith("new") for i in range(FILES)] == [True] * 4 + [False] * 6
    assert os.listdir(journal / "pending") == []
    assert "sub/f00.txt" in (await host.runner.call("list_changes", {}))["content"][0]["text"]
    refused = await host.runner.call("undo_change", {"id": 1, "force": True})
    assert refused["isError"] and "symbolic link" in refused["content"][0]["text"], refused
    os.unlink(root / "sub")
    os.rename(root / "sub2", root / "sub")  # the directory put back: the change is undone
    assert not (await host.runner.call("undo_change", {"id": 1, "force": True}))["isError"]
    assert all((root / "sub" / f"f{i:02}.txt").read_text() == f"old {i}\n" * 100 for i in range(FILES))


@pytest.mark.anyio
async def test_a_temporary_of_a_json_write_cut_short_is_removed_at_start(killed, caplog):
    # What a kill inside the journal's JSON write leaves beside a change's meta.json (and the
    # intent's beside it, carried along when the pending directory became the change).
    root, journal = killed
    start(root, journal, caplog)
    [entry] = (journal / "changes").iterdir()
    for name in (".meta.json.0123abcd", ".intent.json.89abcdef"):
        (entry / name).write_text('{"cut')
    host, said = start(root, journal, caplog)
    assert sorted(os.listdir(entry)) == ["data", "meta.json"], os.listdir(entry)
    assert not (await host.runner.call("undo_change", {"id": 1}))["isError"]


@pytest.mark.anyio
async def test_a_rollback_that_fails_at_start_keeps_the_change_for_undo(tmp_path: Path, caplog, monkeypatch):
    # A transactional batch killed after 4 of 10 files; the next start's rollback fails (a full
    # disk, say): the change is kept, as it stood, for an undo later; never removed with its copies.
    from fsmcp.builtin import journal_restore as restore

    root, journal = tmp_path / "root", tmp_path / "journal"
    root.mkdir()
    for i in range(FILES):
        (root / f"f{i:02}.txt").write_text(f"old {i}\n" * 100)
    killer = KILLER.replace('host.runner.call("write_files", {"files": files})', 'host.runner.call("batch_operations", {"transactional": True, '
                            '"operations": [{"tool": "write_file", "arguments": f} for f in files]})')  # fmt: skip
    kill_midway(root, journal, killer)
    put_back = restore.put_back

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(restore, "put_back", full_disk)
    host, said = start(root, journal, caplog)
    assert any("change 1 (" in line and "rollback" in line and "No space left on device" in line for line in said), said
    assert os.listdir(journal / "pending") == []
    monkeypatch.setattr(restore, "put_back", put_back)
    assert not (await host.runner.call("undo_change", {"id": 1}))["isError"]
    assert olds(root)
