"""Helpers for the search plugin's tests: real trees on disk, the search plugin alone under
fsmcp.testing's fixtures (``root``, ``call``: the SDK's client in process)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import fsmcp_search.hooks
from fsmcp.testing import error_of, ok_text


def children(pid: int) -> dict[int, str]:
    """The live child processes of ``pid`` and their command names, read from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if int(ppid) == pid and state != "Z":
            found[int(entry)] = comm
    return found


def rg_children(pid: int) -> list[int]:
    """The live rg processes below ``pid`` (a confined rg runs below its launcher and the first
    process of its PID namespace)."""
    found, below = [], [pid]
    while below:
        for child, comm in children(below.pop()).items():
            below.append(child)
            if comm == "rg":
                found.append(child)
    return found


@pytest.fixture(autouse=True)
def no_ripgrep_left():
    """Every search, finished, cut short or failed, leaves no ripgrep process behind."""
    yield
    assert rg_children(os.getpid()) == []


@pytest.fixture
def fsmcp_plugins():
    return [("search", fsmcp_search.hooks)]


@pytest.fixture
def write():
    """``write(base, {"rel/path": text or bytes, ...})``: files with their parents."""

    def write(base: Path, files: dict[str, str | bytes]) -> None:
        for rel, content in files.items():
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)

    return write


@pytest.fixture
def ok():
    """The text of a result that must not be an error."""
    return ok_text


@pytest.fixture
def failure():
    """The code and message of a result that must be an error."""
    return error_of


@pytest.fixture
def process_children():
    """``process_children(pid)``: ``{child pid: command name}`` of the live children of ``pid``."""
    return children


@pytest.fixture
def ripgrep_children():
    """``ripgrep_children(pid)``: the rg processes ``pid`` has started that are still alive."""
    return rg_children
