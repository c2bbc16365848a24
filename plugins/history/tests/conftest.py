"""Fixtures for the history plugin's tests: every installed tool family over a real tree."""

from __future__ import annotations

import io
import os
import tarfile
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from fsmcp.testing import ToolCalls, connect, host_for


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A tree with modes, a nested directory, a link and an archive to extract over it."""
    root = tmp_path / "root"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o750)
    (root / "sub" / "b.txt").write_text("bravo\n")
    (root / "sub" / "deep" / "c.bin").write_bytes(bytes(range(256)) * 4)
    os.chmod(root / "sub" / "deep", 0o711)
    os.symlink("a.txt", root / "link")
    (root / "out").mkdir()
    (root / "out" / "x.txt").write_text("old x\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in (("x.txt", b"new x\n"), ("y/z.txt", b"new z\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o640
            tar.addfile(info, io.BytesIO(data))
    (root / "bundle.tar").write_bytes(buffer.getvalue())
    return root


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "journal"


@pytest.fixture
def server(root: Path, state: Path):
    """``async with server(**settings) as s``: every installed plugin over ``root``, the journal in ``state``."""

    @asynccontextmanager
    async def open_session(*roots, **settings):
        settings.setdefault("journal", str(state))
        host = host_for(roots or [root], entry_points=True, **settings)
        async with connect(host) as client:
            yield ToolCalls(client)

    return open_session
