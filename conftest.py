"""What every test session shares.

The plugin template (``fsmcp-wordcount``, tool ``word_count``) is no dependency of the workspace,
so the server ``uv run fsmcp serve`` starts offers no example tool. The tests need it, both for
its own tests and as a tool that reads for as long as asked (a sparse file of holes), so the
session installs it into a directory of its own: on ``sys.path`` here, on ``PYTHONPATH`` for the
servers the tests start. Tests that build a virtual environment of their own run its programs
without ``PYTHONPATH`` (``test_install.py``, ``test_new_plugin.py``, ``test_packaging.py``).

Bytecode: where the environment says not to write it (``PYTHONDONTWRITEBYTECODE``), every
interpreter the tests start (four workers, each server) would compile the host, the plugins and
their dependencies from source again (a server's start and first call: about a fifth of their
CPU). The session compiles them once before any worker starts, as ``pip install`` does and as
the benchmarks do (``bench/common.py``); a later session finds them compiled and only reads the
timestamps. The workers keep pytest's rewritten test modules the same way.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

TEMPLATE = Path(__file__).resolve().parent / "plugin-template"
_installed: list[str] = []


def _install_template() -> None:
    """Once a session, in the process that starts the workers: each worker finds the directory in
    its environment (``FSMCP_TEST_TEMPLATE``, inherited) rather than installing it again (1.6 CPU-s)."""
    target = os.environ.get("FSMCP_TEST_TEMPLATE", "")
    if "PYTEST_XDIST_WORKER" in os.environ and os.path.isdir(target):
        sys.path.append(target)  # PYTHONPATH holds it already
        return
    target = tempfile.mkdtemp(prefix="fsmcp-template-")
    _installed.append(target)
    uv = shutil.which("uv") or "uv"
    done = subprocess.run(
        [uv, "pip", "install", "--quiet", "--no-deps", "--compile-bytecode", "--python", sys.executable, "--target", target, str(TEMPLATE)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise pytest.UsageError(f"could not install the plugin template for the tests: {done.stderr.strip()}")
    sys.path.append(target)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), target) if p)
    os.environ["FSMCP_TEST_TEMPLATE"] = target


def _compile_bytecode() -> None:
    """The environment's packages and the workspace's own sources (editable installs), compiled
    where their bytecode is missing or older than the source."""
    here = Path(__file__).resolve().parent
    sources = [here / "core" / "src", *sorted(here.glob("plugins/*/src"))]
    # One process a core: on a clean clone this is a minute of CPU, spent before any worker starts.
    for directory in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *map(str, sources)}:
        compileall.compile_dir(directory, quiet=1, workers=0)


if "PYTEST_XDIST_WORKER" not in os.environ:  # once, in the process that starts the workers
    _compile_bytecode()
# pytest caches a test module's rewritten asserts beside it (__pycache__, as Python does) only
# where bytecode may be written: without it each worker rewrites every test module it collects.
sys.dont_write_bytecode = False


# At import, not in pytest_configure: pytest loads the template's tests/conftest.py (which imports
# fsmcp_wordcount) together with this one, before any pytest_configure runs.
_install_template()


def pytest_unconfigure(config: pytest.Config) -> None:
    for target in _installed:
        shutil.rmtree(target, ignore_errors=True)


# The modules holding a test of ten seconds or more in a full run (the longest first, from the
# per-test durations at d072561), run before the others: pytest-xdist hands the tests out in
# their order, and one of them started last would run alone at the end while the other
# workers sit idle. A module not listed keeps its place; a name gone stale only orders less well.
LONGEST_FIRST = [
    "tests/test_properties.py",
    "tests/test_race.py",
    "tests/test_new_plugin.py",
    "tests/test_leftovers.py",
    "tests/test_serving.py",
    "tests/test_locks.py",
    "tests/test_journal_crash.py",
    "tests/test_hostile.py",
    "tests/test_install.py",
    "tests/test_programs_order.py",
    "tests/test_golden.py",
    "plugins/edit/tests/test_property.py",
    "plugins/outline/tests/test_no_grammars.py",
    "tests/test_load.py",
    "tests/test_e2e.py",
    "plugins/patch/tests/test_attacks.py",
    "plugins/history/tests/test_sessions.py",
    "tests/test_journal.py",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))  # stable: a module's tests stay together


@pytest.fixture
def anyio_backend():
    return "asyncio"
