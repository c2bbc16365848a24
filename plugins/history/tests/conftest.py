"""Fixtures for the history plugin's tests: every installed tool family over a real tree, under
fsmcp.testing's fixtures (``root``, ``server``)."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest


@pytest.fixture
def root(root: Path) -> Path:
    """A tree with modes, a nested directory, a link and an archive to extract over it."""
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
def server(server, state: Path):
    """``async with server(**settings) as s``: fsmcp.testing's ``server`` (every installed plugin
    over ``root``), the journal in ``state``."""

    def open_session(*roots, **settings):
        settings.setdefault("journal", str(state))
        return server(*roots, **settings)

    return open_session
