"""Fixtures for the write plugin's tests: real files in tmp_path, the SDK's real client in process."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

import fsmcp_write.hooks
import pytest
from fsmcp.testing import ToolCalls, connect, host_for, tree_of

SECRET = "TOP SECRET: this text lives outside the roots"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text(SECRET)
    return path


@pytest.fixture
def secret() -> str:
    return SECRET


@pytest.fixture
def server(root: Path):
    """``async with server(*roots, **settings) as s``: the write plugin alone, over ``root`` by default."""

    @asynccontextmanager
    async def open_session(*roots, **settings):
        host = host_for(roots or [root], [("write", fsmcp_write.hooks)], **settings)
        async with connect(host) as client:
            yield ToolCalls(client)

    return open_session


@pytest.fixture(name="tree_of")
def tree_of_fixture():
    return tree_of
