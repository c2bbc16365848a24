"""Fixtures for the workspace plugin's tests: real files in tmp_path, read, write and workspace
under fsmcp.testing's fixtures (``root``, ``server``: the SDK's client in process)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

import fsmcp_read.hooks
import fsmcp_workspace.hooks
import fsmcp_write.hooks
import pytest
from fsmcp.testing import ToolCalls, connect, host_for

PLUGINS = [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks), ("workspace", fsmcp_workspace.hooks)]


@pytest.fixture
def fsmcp_plugins():
    return PLUGINS


@pytest.fixture
def root(root: Path) -> Path:
    """The allowed root, with a project inside it and a secret beside it."""
    (root / "project" / "src").mkdir(parents=True)
    (root / "project" / "notes.txt").write_text("project notes\n")
    (root / "top.txt").write_text("top\n")
    (root.parent / "secret.txt").write_text("SECRET")
    return root


@pytest.fixture
def make_host(root: Path):
    """``make_host(*roots, **settings)``: a host with read, write and workspace, over ``root`` by default."""

    def make(*roots, **settings):
        return host_for(roots or [root], PLUGINS, **settings)

    return make


@pytest.fixture
def session():
    """``async with session(host) as s``: one client connected to ``host`` (two sessions can share one)."""

    @asynccontextmanager
    async def open_session(host):
        async with connect(host) as client:
            yield ToolCalls(client)

    return open_session
