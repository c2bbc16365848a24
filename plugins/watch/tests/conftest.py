"""Fixtures for the watch plugin's tests: real files, another process that changes them, the watch
plugin alone under fsmcp.testing's fixtures (``root``, ``outside``, ``server``)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import fsmcp_watch.hooks
import pytest
from fsmcp.testing import text_of

# Runs in a separate process: each argument is "op:path[:arg]"; prints the wall clock after the last.
_CHANGER = """
import os, sys, time
for step in sys.argv[1:]:
    op, path, *arg = step.split(":")
    if op == "write":
        with open(path, "w") as fh:
            fh.write(arg[0] if arg else "x")
    elif op == "mkdir":
        os.makedirs(path)
    elif op == "rename":
        os.rename(path, arg[0])
    elif op == "delete":
        os.unlink(path)
print(time.time())
"""


class Session:
    """A connected client over one host, so that calls share the server's baselines."""

    def __init__(self, client):
        self.client = client

    async def watch(self, path: Path | str, **args) -> str:
        result = await self.client.call_tool("watch_file", {"path": str(path), **args})
        assert not result.is_error, text_of(result)
        return text_of(result)

    async def fail(self, code: str, path: Path | str, **args) -> str:
        result = await self.client.call_tool("watch_file", {"path": str(path), **args})
        text = text_of(result)
        assert result.is_error and text.startswith(f"{code}: "), text
        return text

    async def data(self, path: Path | str, **args) -> dict:
        """The result's facts, from a host started with format = "json"."""
        result = await self.client.call_tool("watch_file", {"path": str(path), **args})
        envelope = json.loads(text_of(result))
        assert envelope["ok"], envelope
        return envelope["data"]


@pytest.fixture
def fsmcp_plugins():
    return [("watch", fsmcp_watch.hooks)]


@pytest.fixture
def session(server):
    """``async with session(engine=..., budget=..., format=...) as s``: one host, one client."""

    @asynccontextmanager
    async def session(*, format: str = "text", budget: int | None = None, **options) -> AsyncIterator[Session]:
        settings = {"format": format, "plugins": {"watch": options}}
        if budget is not None:
            settings["budget"] = budget
        async with server(**settings) as calls:
            yield Session(calls.client)

    return session


@pytest.fixture
def elsewhere():
    """``await elsewhere("write:/p:text", "rename:/a:/b", ...)``: changes made by another process.

    Returns the wall-clock time (``time.time()``) right after the last change.
    """

    async def elsewhere(*steps: str) -> float:
        done = await anyio.run_process([sys.executable, "-c", _CHANGER, *steps])
        return float(done.stdout)

    return elsewhere


@pytest.fixture
def aged():
    """``aged(path)``: set a file's times an hour back, so that no default `since` covers it."""

    def aged(path: Path) -> None:
        old = time.time() - 3600
        os.utime(path, (old, old))

    return aged


def _plugin_threads() -> list[str]:
    busy = []
    for thread_id, frame in sys._current_frames().items():
        if thread_id == threading.get_ident():
            continue
        f = frame
        while f is not None:
            if f"{os.sep}fsmcp_watch{os.sep}" in f.f_code.co_filename:
                busy.append(f"thread {thread_id} in {f.f_code.co_name}")
                break
            f = f.f_back
    return busy


def _inotify_fds() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return count


@pytest.fixture
def plugin_threads():
    """``plugin_threads()``: the other threads now running this plugin's code (a scan, a wait)."""
    return _plugin_threads


@pytest.fixture
def inotify_fds():
    """``inotify_fds()``: how many inotify instances this process holds open."""
    return _inotify_fds
