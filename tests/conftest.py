"""Fixtures the host's tests share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An allowed root ``tmp_path/root`` holding ``a.txt`` ("alpha"); some modules define their own."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


ASKTEST = '''
from fsmcp import Access, Refusal, hookimpl


@hookimpl
def fsmcp_check_path(path, access):
    if path.path.name in (".env", "id_rsa"):
        return Refusal("the file holds secrets", ask=f"The agent wants to {'read' if access is Access.READ else 'change'} {path.path.name}")
    if path.path.name == "plain.key":
        return "keys are off limits"
    return None
'''


@pytest.fixture
def asktest(tmp_path):
    """The environment of a server that finds the veto plugin ``asktest`` by its entry point.

    ``.env`` and ``id_rsa`` are refused with a :class:`fsmcp.Refusal` that asks ("The agent
    wants to read .env"), ``plain.key`` with a plain reason.
    """
    site = tmp_path / "site"
    dist = site / "fsmcp_asktest-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "fsmcp_asktest.py").write_text(ASKTEST)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fsmcp-asktest\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[fsmcp]\nasktest = fsmcp_asktest\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
