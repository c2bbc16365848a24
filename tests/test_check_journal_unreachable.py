"""The change journal is the server's own: no tool reads or writes it, whatever path the client
gives, and the server refuses to start where a root meets it.

Attacks: the journal's directory reached through a bind mount inside a root (the same directory
under another name, which real paths do not see); a root given through a link that is swapped to
the journal's directory after the start.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fsmcp.testing import SECRET, ToolCalls, connect, host_for


def _reads_and_writes(journal_seen_as: Path):
    """Calls that list, search, read and write the journal's directory at ``journal_seen_as``."""
    return [
        ("list_directory", {"path": str(journal_seen_as), "recursive": True}),
        ("directory_tree", {"path": str(journal_seen_as)}),
        ("grep_files", {"regex": "TOP-SECRET", "directory": str(journal_seen_as)}),
        ("search_files", {"directory": str(journal_seen_as), "nameContains": "meta"}),
        ("read_file", {"path": str(journal_seen_as / "lock")}),
        ("write_file", {"path": str(journal_seen_as / "planted"), "content": "planted by a client\n"}),
        ("append_file", {"path": str(journal_seen_as / "lock"), "content": "appended by a client\n"}),
    ]


@pytest.mark.anyio
async def test_the_journal_through_a_bind_mount_inside_a_root_is_refused_or_unreachable(tmp_path):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "a.txt").write_text(SECRET + "\n")
    state = (tmp_path / "state").resolve()
    journal = state / "journal"
    state.mkdir()
    mounted = root / "m"
    mounted.mkdir()
    done = subprocess.run(["mount", "--bind", str(state), str(mounted)], capture_output=True, text=True)
    assert done.returncode == 0, f"the test needs a bind mount: {done.stderr}"
    try:
        try:
            host = host_for([root], entry_points=True, journal=str(journal))
        except Exception as exc:  # the start refused: the promise holds
            print("the start refused:", exc)
            return
        async with connect(host) as client:
            s = ToolCalls(client)
            await s.ok("delete_file", path="a.txt")  # its copy (the secret) is in the journal now
            answers = []
            for tool, args in _reads_and_writes(mounted / "journal"):
                answers.append((tool, *await s.call(tool, **args)))
        for tool, failed, text in answers:
            print(tool, "failed" if failed else "ANSWERED", "|", text[:160].replace("\n", " / "))
        reached = [tool for tool, failed, text in answers if not failed]
        assert not (journal / "planted").exists(), "a client wrote a file into the journal through the bind mount"
        assert not reached, f"a tool reached the journal through a bind mount inside a root: {reached}"
    finally:
        subprocess.run(["umount", "-l", str(mounted)], check=False)


@pytest.mark.anyio
async def test_a_root_given_through_a_link_swapped_to_the_journal_after_the_start_does_not_reach_it(tmp_path):
    real = (tmp_path / "real").resolve()
    real.mkdir()
    (real / "a.txt").write_text(SECRET + "\n")
    state = (tmp_path / "state").resolve()
    journal = state / "journal"
    state.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    host = host_for([link], entry_points=True, journal=str(journal))
    async with connect(host) as client:
        s = ToolCalls(client)
        await s.ok("delete_file", path=str(link / "a.txt"))
        swapped = tmp_path / "swapped"
        swapped.symlink_to(state)
        os.replace(swapped, link)  # the root's name now leads to the journal's parent
        answers = []
        for tool, args in _reads_and_writes(link / "journal"):
            answers.append((tool, *await s.call(tool, **args)))
    for tool, failed, text in answers:
        print(tool, "failed" if failed else "ANSWERED", "|", text[:160].replace("\n", " / "))
    assert not (journal / "planted").exists(), "a client wrote a file into the journal through a root's swapped link"
    assert not [tool for tool, failed, _ in answers if not failed], "a tool reached the journal through a root's swapped link"


@pytest.mark.anyio
async def test_a_journal_kept_in_a_bind_mount_of_a_directory_inside_a_root_is_refused_or_unreachable(tmp_path):
    # The other way round: the journal's directory is, under another name, a directory of the root.
    root = (tmp_path / "root").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text(SECRET + "\n")
    state = (tmp_path / "state").resolve()
    state.mkdir()
    done = subprocess.run(["mount", "--bind", str(root / "sub"), str(state)], capture_output=True, text=True)
    assert done.returncode == 0, f"the test needs a bind mount: {done.stderr}"
    try:
        try:
            host = host_for([root], entry_points=True, journal=str(state / "journal"))
        except Exception as exc:  # the start refused: the promise holds
            print("the start refused:", exc)
            return
        async with connect(host) as client:
            s = ToolCalls(client)
            await s.ok("delete_file", path="a.txt")
            answers = [(tool, *await s.call(tool, **args)) for tool, args in _reads_and_writes(root / "sub" / "journal")]
        for tool, failed, text in answers:
            print(tool, "failed" if failed else "ANSWERED", "|", text[:160].replace("\n", " / "))
        assert not (root / "sub" / "journal" / "planted").exists(), "a client wrote a file into the journal (a directory of the root under another name)"
        assert not [tool for tool, failed, _ in answers if not failed], "a tool reached the journal, a directory of the root under another name"
    finally:
        subprocess.run(["umount", "-l", str(state)], check=False)


@pytest.mark.anyio
async def test_a_journal_reached_through_a_link_swapped_into_a_root_after_the_start_stays_out_of_reach(tmp_path):
    # journal = L/journal with L a link to a directory outside the roots at the start, then
    # swapped to a directory of the root: the journal keeps the real path found at the start.
    root = (tmp_path / "root").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text(SECRET + "\n")
    state = (tmp_path / "state").resolve()
    state.mkdir()
    link = tmp_path / "L"
    link.symlink_to(state)
    host = host_for([root], entry_points=True, journal=str(link / "journal"))
    swapped = tmp_path / "L2"
    swapped.symlink_to(root / "sub")
    os.replace(swapped, link)
    async with connect(host) as client:
        s = ToolCalls(client)
        await s.ok("delete_file", path="a.txt")
        answers = [(tool, *await s.call(tool, **args)) for tool, args in _reads_and_writes(root / "sub" / "journal")]
    for tool, failed, text in answers:
        print(tool, "failed" if failed else "ANSWERED", "|", text[:160].replace("\n", " / "))
    print("root/sub after:", sorted(p.name for p in (root / "sub").iterdir()))
    # write_file's planted is a client's file in the root (no journal there); the journal's own entries must not be.
    assert not {"changes", "lock", "pending"} & {p.name for p in (root / "sub" / "journal").iterdir()}, "the journal wrote into the root through its swapped parent link"
    assert (state / "journal" / "changes").is_dir(), "the journal is not where its real path was at the start"
    assert not any(SECRET in text for _, failed, text in answers if not failed)
