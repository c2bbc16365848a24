"""Fixtures the host's tests share."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An allowed root ``tmp_path/root`` holding ``a.txt`` ("alpha"); some modules define their own."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


def _session_top(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        top = top.parent  # the session's, above each worker's own
    return top


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or its process ends
        yield


@pytest.fixture(scope="session")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[Path], Any]], Any]:
    """``built_once(name, build)``: ``build(directory)``'s result (JSON), built once a session.

    pytest-xdist's workers share one copy under the session's temporary directory (its
    ``--dist loadgroup`` cannot keep a module's tests on one worker): whichever needs it first
    builds it, a worker that finds it built uses it."""
    top = _session_top(tmp_path_factory)

    def once(name: str, build: Callable[[Path], Any]) -> Any:
        where, result = top / f"once-{name}", top / f"once-{name}.json"
        with _locked(top / f"once-{name}.lock"):
            if not result.exists():
                shutil.rmtree(where, ignore_errors=True)  # what a build that failed left
                where.mkdir()
                result.write_text(json.dumps(build(where)))
        return json.loads(result.read_text())

    return once


@pytest.fixture(scope="session")
def wheel(built_once: Callable[[str, Callable[[Path], Any]], Any]) -> Callable[[str], Path]:
    """``wheel(distribution)``: the wheel of ``fsmcp``, of a plugin of this repository
    (``fsmcp-read``) or of the plugin template (``fsmcp-wordcount``), built once a session as an
    index gets it (``uv build``: the sdist, then the wheel from the unpacked sdist), for the tests
    that install it into environments of their own (each install of a source tree builds it again)."""

    def source(distribution: str) -> Path:
        if distribution == "fsmcp":
            return REPO / "core"
        if distribution == "fsmcp-wordcount":
            return REPO / "plugin-template"
        return REPO / "plugins" / distribution.removeprefix("fsmcp-")

    def built(distribution: str) -> Path:
        def build(where: Path) -> str:
            done = subprocess.run(
                ["uv", "build", "--quiet", "--out-dir", str(where), str(source(distribution))],
                cwd=where, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},  # the root conftest's: the template
                capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            (made,) = where.glob("*.whl")
            return str(made)

        return Path(built_once(f"wheel-{distribution}", build))

    return built


@pytest.fixture(scope="session")
def all_chunks_told(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int, int, Any], list[Any] | None]:
    """``all_chunks_told(name, chunk, chunks, found)``: for a test run in ``chunks`` parametrized
    chunks (so that pytest-xdist spreads them over its workers), each chunk tells what it found;
    the chunk that tells last gets every chunk's (in chunk order) and checks what holds of the
    whole, the others get None. A chunk that failed never tells: the whole is not checked then,
    and that chunk's failure says why."""
    top = _session_top(tmp_path_factory)

    def told(name: str, chunk: int, chunks: int, found: Any) -> list[Any] | None:
        place = top / f"chunks-{name}"
        with _locked(top / f"chunks-{name}.lock"):
            place.mkdir(exist_ok=True)
            (place / f"{chunk}.json").write_text(json.dumps(found))
            if len(list(place.iterdir())) < chunks:
                return None
            return [json.loads((place / f"{i}.json").read_text()) for i in range(chunks)]

    return told
