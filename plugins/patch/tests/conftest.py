"""Fixtures for patch_apply's tests: the tool through the real client over fsmcp.testing's ``root``, snapshots."""

from __future__ import annotations

import subprocess
from pathlib import Path

import fsmcp_patch.hooks
import pytest
from fsmcp.testing import connect, host_for, text_of


@pytest.fixture
def make_host(root):
    def make(roots=None, **settings):
        return host_for(roots or [root], [("patch", fsmcp_patch.hooks)], **settings)

    return make


@pytest.fixture
def apply_patch(make_host):
    """Call patch_apply through the SDK's client; returns (is_error, text)."""

    async def call(patch: str, *, host=None, **args):
        async with connect(host or make_host()) as client:
            result = await client.call_tool("patch_apply", {"patch": patch, **args})
        return result.is_error, text_of(result)

    return call


@pytest.fixture
def snapshot():
    """Every file under a directory, as relative path → bytes."""

    def take(directory: Path) -> dict[str, bytes]:
        return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file() and ".git" not in p.parts}

    return take


@pytest.fixture
def run():
    """Run a real tool; returns its stdout as text (diff exits 1 when the inputs differ)."""

    def run_(cwd: Path, *argv: str) -> str:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
        assert done.returncode in (0, 1), done.stderr.decode()
        return done.stdout.decode("utf-8")

    return run_
