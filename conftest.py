"""What every test session shares.

The plugin template (``fsmcp-wordcount``, tool ``word_count``) is no dependency of the workspace,
so the server ``uv run fsmcp serve`` starts offers no example tool. The tests need it, both for
its own tests and as a tool that reads for as long as asked (a sparse file of holes), so the
session installs it into a directory of its own: on ``sys.path`` here, on ``PYTHONPATH`` for the
servers the tests start. Tests that build a virtual environment of their own run its programs
without ``PYTHONPATH`` (``test_install.py``, ``test_new_plugin.py``, ``test_packaging.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

TEMPLATE = Path(__file__).resolve().parent / "plugin-template"
_installed: list[str] = []


def _install_template() -> None:
    target = tempfile.mkdtemp(prefix="fsmcp-template-")
    _installed.append(target)
    uv = shutil.which("uv") or "uv"
    done = subprocess.run(
        [uv, "pip", "install", "--quiet", "--no-deps", "--python", sys.executable, "--target", target, str(TEMPLATE)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise pytest.UsageError(f"could not install the plugin template for the tests: {done.stderr.strip()}")
    sys.path.append(target)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), target) if p)


# At import, not in pytest_configure: pytest loads the template's tests/conftest.py (which imports
# fsmcp_wordcount) together with this one, before any pytest_configure runs.
_install_template()


def pytest_unconfigure(config: pytest.Config) -> None:
    for target in _installed:
        shutil.rmtree(target, ignore_errors=True)


@pytest.fixture
def anyio_backend():
    return "asyncio"
