"""Fixtures the host's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An allowed root ``tmp_path/root`` holding ``a.txt`` ("alpha"); some modules define their own."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root

