"""Fixtures for the write plugin's tests: real files in tmp_path, the SDK's real client in process."""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

import fsmcp_write.hooks
import pytest
from fsmcp.testing import ToolCalls, connect, host_for

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


def snapshot(top: Path) -> dict[str, object]:
    """Everything under ``top``: a link by its target, a file by its bytes and mode, a directory by name."""
    seen: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(top))
            if path.is_symlink():
                seen[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[rel] = ("dir",)
            else:
                seen[rel] = ("file", path.read_bytes(), path.stat().st_mode)
    return seen


@pytest.fixture
def tree_of():
    return snapshot
