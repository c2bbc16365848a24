"""Helpers for the shell plugin's tests: real trees on disk, the shell plugin alone under
fsmcp.testing's fixtures (``root``, ``outside``, ``call``: the SDK's client in process)."""

from __future__ import annotations

import os
import signal

import anyio
import pytest
from mcp import types

import fsmcp_shell.hooks
import fsmcp_shell.process
from fsmcp.testing import error_of, ok_text, processes_with


@pytest.fixture
def fsmcp_plugins():
    return [("shell", fsmcp_shell.hooks)]


@pytest.fixture
def call(call):
    """``await call(args, roots=[...], tool="run_command", shell={...}, **settings)``: fsmcp.testing's
    ``call``, the tool ``run_command`` unless named.

    ``shell`` is the ``[plugins.shell]`` section.
    """

    async def run(args: dict, *, tool: str = "run_command", shell: dict | None = None, **settings) -> types.CallToolResult:
        return await call(tool, args, plugins={"shell": shell or {}}, **settings)

    return run


@pytest.fixture
def ok():
    """The text of a result that must not be an error."""
    return ok_text


@pytest.fixture
def failure():
    """``(code, message)`` of a result that must be an error."""
    return error_of


@pytest.fixture
def spawned(monkeypatch):
    """Every argv the plugin hands to the host to start, in order."""
    calls: list[list[str]] = []
    real = fsmcp_shell.process.start_program

    async def recording(ctx, argv, **kwargs):
        calls.append(list(argv))
        return await real(ctx, argv, **kwargs)

    monkeypatch.setattr(fsmcp_shell.process, "start_program", recording)
    return calls


@pytest.fixture
def new_marker():
    """``new_marker()``: a sleep duration no other process carries, so that a test finds its own
    processes by command line (other test runs on the machine use other ones). Whatever still
    carries one after the test is killed, so that a failing test leaves nothing behind."""
    made: list[str] = []
    pid = os.getpid()

    def marker() -> str:
        made.append(f"987.{pid:07}{len(made):02}")  # fixed width: no marker is a prefix of another
        return made[-1]

    yield marker
    for mark in made:
        for leftover in processes_with(mark):
            try:
                os.kill(leftover, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def gone():
    """``await gone(marker)``: wait (at most 30 s) until no process carries ``marker``."""

    async def gone(marker: str) -> None:
        with anyio.fail_after(30):
            while processes_with(marker):
                await anyio.sleep(0.05)

    return gone


@pytest.fixture
def running():
    """``processes_with(marker)``: the live processes whose command line holds ``marker``."""
    return processes_with
