"""`fsmcp-outline` installed with no extra: Python and Markdown, and a pointer to the extras for the rest."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def run(command: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    # without the session's PYTHONPATH (conftest.py), which would add the template to the venv;
    # with bytecode written (whatever PYTHONDONTWRITEBYTECODE says): each call after the first
    # finds compiled what the first imported
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    return subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_without_an_extra_python_and_markdown_are_outlined(tmp_path):
    assert shutil.which("uv"), "this test needs uv on PATH"
    venv, work = tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    assert run(["uv", "venv", "--quiet", "--python", sys.executable, venv], cwd=work).returncode == 0
    python = venv / "bin" / "python"
    done = run(["uv", "pip", "install", "--quiet", "--python", python, REPO / "core", REPO / "plugins" / "outline"], cwd=work)
    assert done.returncode == 0, done.stderr
    listed = run(["uv", "pip", "list", "--python", python], cwd=work).stdout
    assert "tree-sitter" not in listed, listed
    (work / "m.py").write_text("class A:\n    def f(self):\n        pass\n")
    (work / "r.md").write_text("# Title\n\n## Part\n")
    (work / "m.rs").write_text("fn main() {}\n")

    def outline(name: str) -> subprocess.CompletedProcess[str]:
        return run([python, "-m", "fsmcp", "call", "outline", f'{{"path": "{name}"}}', work], cwd=work)

    py, md, rs = outline("m.py"), outline("r.md"), outline("m.rs")
    assert py.returncode == 0 and py.stdout.splitlines()[1:] == ["1-3 class A", "  2-3 def f(self)"], py.stdout + py.stderr
    assert md.returncode == 0 and md.stdout.splitlines()[1:] == ["1-3 # Title", "  3-3 ## Part"], md.stdout + md.stderr
    assert rs.returncode != 0 and "known languages: markdown, python; install fsmcp-outline[" in rs.stdout + rs.stderr
    assert "rust" in (rs.stdout + rs.stderr).split("install fsmcp-outline[")[1], rs.stdout + rs.stderr
