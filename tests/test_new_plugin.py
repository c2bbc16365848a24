"""``fsmcp new-plugin NAME``: the template rendered, installed beside a fresh fsmcp, and its tests run.

The install test builds a real virtual environment with ``uv`` (as ``test_install.py`` does) and
installs fsmcp from this repository as a wheel, so the template it renders is the one shipped
inside the package, not the repository's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from fsmcp import scaffold

REPO = Path(__file__).resolve().parents[1]
TEMPLATE_NAMES = ("wordcount", "word_count", "WordCount", "Word count")
TIMEOUT = 300  # a cold uv cache downloads every dependency once


def run(command: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], check=False, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )


def new_plugin(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "fsmcp", "new-plugin", *args], cwd=cwd)


def files_of(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


# -- rendering, in the development environment ------------------------------------------------


def test_demo_is_the_template_with_every_name_replaced(tmp_path):
    done = new_plugin("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = tmp_path / "fsmcp-demo"
    assert done.stdout.startswith("fsmcp: wrote fsmcp-demo (plugin demo, distribution fsmcp-demo, tool demo)")
    files = files_of(made)
    assert {"pyproject.toml", "README.md", "src/fsmcp_demo/hooks.py", "src/fsmcp_demo/tools.py", "tests/test_demo.py"} <= set(files)
    for path, text in files.items():
        for old in TEMPLATE_NAMES:
            assert old not in path and old not in text, f"{old!r} left in {path}"
    assert not any("__pycache__" in path or path.endswith(".pyc") for path in files)
    pyproject = files["pyproject.toml"]
    assert 'name = "fsmcp-demo"' in pyproject
    assert 'demo = "fsmcp_demo.hooks"' in pyproject
    assert 'packages = ["src/fsmcp_demo"]' in pyproject
    tools = files["src/fsmcp_demo/tools.py"]
    assert 'name="demo"' in tools and 'title="Demo"' in tools and "class DemoInput(ToolInput)" in tools
    assert 'PLUGIN = ("demo", hooks)' in files["tests/test_demo.py"]


def test_every_file_of_the_template_is_rendered_and_nothing_else(tmp_path):
    assert new_plugin("demo", cwd=tmp_path).returncode == 0
    template = {
        str(p.relative_to(REPO / "plugin-template"))
        for p in (REPO / "plugin-template").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)
    }
    renamed = {path.replace("wordcount", "demo").replace("word_count", "demo") for path in template}
    assert set(files_of(tmp_path / "fsmcp-demo")) == renamed


def test_a_name_of_several_words_is_spelt_for_each_place(tmp_path):
    assert new_plugin("line_count", "--dir", tmp_path, cwd=REPO).returncode == 0
    files = files_of(tmp_path / "fsmcp-line-count")
    assert 'name = "fsmcp-line-count"' in files["pyproject.toml"]
    assert 'line_count = "fsmcp_line_count.hooks"' in files["pyproject.toml"]
    tools = files["src/fsmcp_line_count/tools.py"]
    assert 'name="line_count"' in tools and 'title="Line count"' in tools and "class LineCountInput(ToolInput)" in tools
    assert "tests/test_line_count.py" in files
    assert scaffold.replacements("line_count")["fsmcp-wordcount"] == "fsmcp-line-count"


def test_an_existing_directory_is_never_overwritten(tmp_path):
    existing = tmp_path / "fsmcp-demo"
    existing.mkdir()
    (existing / "mine.txt").write_text("keep me\n")
    done = new_plugin("demo", cwd=tmp_path)
    assert done.returncode == 2
    assert "already exists" in done.stderr
    assert files_of(existing) == {"mine.txt": "keep me\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fsmcp-demo"]  # no staging directory left behind


@pytest.mark.parametrize("name", ["Demo", "1demo", "de-mo", "de__mo", "_demo", "demo_", "de mo", "démo"])
def test_names_that_cannot_spell_a_package_are_refused(tmp_path, name):
    done = new_plugin(name, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"fsmcp: error: {name!r} cannot name a plugin")
    assert list(tmp_path.iterdir()) == []


def test_the_name_of_an_installed_plugin_is_refused(tmp_path):
    done = new_plugin("read", cwd=tmp_path)
    assert done.returncode == 2
    assert "a plugin named 'read' is already installed (fsmcp_read.hooks)" in done.stderr


def test_a_missing_parent_directory_is_refused(tmp_path):
    done = new_plugin("demo", "--dir", tmp_path / "absent", cwd=tmp_path)
    assert done.returncode == 2
    assert "is not an existing directory" in done.stderr
    assert not (tmp_path / "absent").exists()


def test_a_development_install_renders_the_repository_template():
    assert scaffold.template_dir() == REPO / "plugin-template"


# -- installed for real -------------------------------------------------------------------------


@dataclass
class Installed:
    python: Path
    work: Path
    plugin: Path
    template: str
    rendered: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    assert shutil.which("uv"), "this test needs uv on PATH"
    base = tmp_path_factory.mktemp("new-plugin")
    work = base / "work"
    work.mkdir()
    venv = base / "venv"
    python = venv / "bin" / "python"
    done = run(["uv", "venv", "--quiet", "--python", sys.executable, venv], cwd=work)
    assert done.returncode == 0, done.stderr
    done = run(["uv", "pip", "install", "--quiet", "--python", python, REPO / "core", "pytest>=8"], cwd=work)
    assert done.returncode == 0, done.stderr
    template = run([python, "-c", "from fsmcp.scaffold import template_dir; print(template_dir())"], cwd=work).stdout.strip()
    rendered = run([python, "-m", "fsmcp", "new-plugin", "demo"], cwd=work)
    plugin = work / "fsmcp-demo"
    if rendered.returncode == 0:
        done = run(["uv", "pip", "install", "--quiet", "--python", python, plugin], cwd=work)
        assert done.returncode == 0, done.stderr
    return Installed(python, work, plugin, template, rendered)


def test_an_installed_fsmcp_renders_the_template_it_ships(installed):
    assert installed.rendered.returncode == 0, installed.rendered.stderr
    assert "/site-packages/fsmcp/_template" in installed.template


def test_fsmcp_tools_lists_the_new_plugins_tool(installed):
    done = run([installed.python, "-m", "fsmcp", "tools", installed.work], cwd=installed.work)
    assert done.returncode == 0, done.stderr
    assert dict(line.split() for line in done.stdout.splitlines()) == {"demo": "demo"}


def test_the_new_plugins_own_tests_pass(installed):
    done = run([installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=installed.plugin)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout
