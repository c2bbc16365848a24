"""``fsmcp new-plugin NAME``: the template rendered, installed beside a fresh fsmcp, and its tests run.

The install test takes fsmcp built as a package index would (conftest's ``wheel``: ``uv build``,
the sdist, then the wheel from the sdist), installs that wheel in a fresh virtual environment,
renders a plugin with it and runs the next steps it prints, as printed. The rendering tests run
``fsmcp new-plugin`` forked from the test process's fork server (``fsmcp.testing.forked``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fsmcp.api import hookspecs
from fsmcp.cli import scaffold
from fsmcp import testing
from fsmcp.testing import forked

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "plugin-template"
TEMPLATE_NAMES = ("wordcount", "word_count", "WordCount", "Word count")
# The names examples elsewhere use: none may appear in a plugin rendered under another name.
EXAMPLE_NAMES = ("linecount", "line_count", "LineCount", "Line count", "mytool", "Mytool", "demo", "Demo")
NAMES = ("mytool", "line_count", "csv2json")
# The host's names a plugin's files may hold: its hooks and fsmcp.testing's fixtures (fsmcp_plugins).
HOST_NAMES = [name for module in (hookspecs, testing) for name in vars(module) if name.startswith("fsmcp_")]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TIMEOUT = 300  # a cold uv cache downloads every dependency once


def run(command: list[str | Path], cwd: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    # Without the session's PYTHONPATH (conftest.py), which would add the template to every venv.
    # With bytecode written (whatever PYTHONDONTWRITEBYTECODE says): a venv's later processes
    # (the plugin's pytest) then find compiled what its first ones imported.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")} | extra_env
    return subprocess.run(
        [str(c) for c in command], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )


def new_plugin(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(forked("new-plugin", *map(str, args)), cwd=cwd)


def files_of(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


# -- rendering, in the development environment ------------------------------------------------


def test_demo_is_the_template_with_every_name_replaced(tmp_path):
    done = new_plugin("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    made = tmp_path / "fsmcp-demo"
    assert done.stdout.startswith("fsmcp: wrote fsmcp-demo (plugin demo, distribution fsmcp-demo, tool demo)")
    files = files_of(made)
    assert {"pyproject.toml", "README.md", "LICENSE", "src/fsmcp_demo/hooks.py", "src/fsmcp_demo/tools.py", "tests/test_demo.py"} <= set(files)
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
    assert 'return [("demo", hooks)]' in files["tests/conftest.py"]


@pytest.mark.parametrize("name", NAMES)
def test_every_name_in_the_rendered_plugin_is_its_own(tmp_path, name):
    assert new_plugin(name, cwd=tmp_path).returncode == 0
    own = scaffold.replacements(name)
    made = tmp_path / own["fsmcp-wordcount"]
    foreign = [n for n in (*TEMPLATE_NAMES, *EXAMPLE_NAMES) if n not in own.values() and n.lower() not in name]
    for path, text in files_of(made).items():
        for other in foreign:
            assert other not in path and other not in text, f"{other!r} in {path} of plugin {name}"
        # Every fsmcp-… / fsmcp_… is this plugin's distribution or package (or a file named after
        # them), or a hook's or a testing fixture's name.
        rest = text.replace(own["fsmcp-wordcount"], "").replace(own["fsmcp_wordcount"], "")
        rest = re.sub("|".join(HOST_NAMES), "", rest)
        stray = re.search(r"fsmcp[-_][a-z]\S*", rest)
        assert stray is None, f"{stray.group(0)} in {path} of plugin {name}"
    readme = (made / "README.md").read_text()
    assert f"pip install {own['fsmcp-wordcount']}\n" in readme
    assert f"dist/{own['fsmcp_wordcount']}-0.1.0-py3-none-any.whl" in readme


@pytest.mark.parametrize("name", NAMES)
def test_the_rendered_readme_links_nothing_outside_the_plugin(tmp_path, name):
    """Rendered anywhere, the README's links work: web addresses, or files of the plugin itself."""
    assert new_plugin(name, cwd=tmp_path).returncode == 0
    made = tmp_path / scaffold.replacements(name)["fsmcp-wordcount"]
    targets = LINK.findall((made / "README.md").read_text())
    assert targets, "the README links nothing at all: the check below would pass vacuously"
    for target in targets:
        if target.startswith("https://"):
            continue
        assert not target.startswith(("/", "..", "file:")), target
        assert (made / target.split("#")[0]).exists(), f"{target} is not in the rendered plugin"


def test_the_next_steps_name_this_environment_and_the_plugin(tmp_path):
    done = new_plugin("demo", cwd=tmp_path)
    install, test = done.stdout.splitlines()[2:4]
    made = str((tmp_path / "fsmcp-demo").absolute())
    # This environment is the workspace's, a uv project's: the plugin is added to the project.
    assert install.strip() == f"cd {REPO} && {sys.executable} -m uv add --editable {made}"
    assert test.strip() == f"cd {made} && {sys.executable} -m pytest"


def test_every_file_of_the_template_is_rendered_and_nothing_else(tmp_path):
    assert new_plugin("demo", cwd=tmp_path).returncode == 0
    template = {
        str(p.relative_to(TEMPLATE))
        for p in (TEMPLATE).rglob("*")
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
    assert scaffold.template_dir() == TEMPLATE


# -- installed for real -------------------------------------------------------------------------


@dataclass
class Installed:
    python: Path
    work: Path
    plugin: Path
    template: str
    rendered: subprocess.CompletedProcess[str]
    steps: list[subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Callable[[str], Path]) -> Installed:
    assert shutil.which("uv"), "this test needs uv on PATH"
    base = tmp_path_factory.mktemp("new-plugin")
    work = base / "work"
    work.mkdir()
    venv = base / "venv"
    python = venv / "bin" / "python"
    done = run(["uv", "venv", "--quiet", "--python", sys.executable, venv], cwd=work)
    assert done.returncode == 0, done.stderr
    install = ["uv", "pip", "install", "--quiet", "--python", python, wheel("fsmcp")]
    done = run([*install, "--offline"], cwd=work)  # from uv's cache, asking no index
    if done.returncode != 0:  # a dependency not in the cache yet: fetched
        done = run(install, cwd=work)
    assert done.returncode == 0, done.stderr
    template = run([python, "-c", "from fsmcp.cli.scaffold import template_dir; print(template_dir())"], cwd=work).stdout.strip()
    rendered = run([python, "-m", "fsmcp", "new-plugin", "demo"], cwd=work)
    # A pytest run of its own tmp directory: it must not prune the ones this session still uses.
    basetemp = f"--basetemp={base / 'pytest'}"
    steps = [run(["bash", "-c", line.strip()], cwd=work, PYTEST_ADDOPTS=basetemp) for line in rendered.stdout.splitlines()[2:]]
    return Installed(python, work, work / "fsmcp-demo", template, rendered, steps)


def test_an_installed_fsmcp_renders_the_template_it_ships(installed):
    assert installed.rendered.returncode == 0, installed.rendered.stderr
    assert "/site-packages/fsmcp/plugin_template" in installed.template


def test_the_printed_next_steps_install_the_plugin_and_its_tests_pass(installed):
    install, tests = installed.steps
    assert install.returncode == 0, install.stderr
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "failed" not in tests.stdout


def test_fsmcp_tools_lists_the_new_plugins_tool(installed):
    done = run([installed.python, "-m", "fsmcp", "tools", installed.work], cwd=installed.work)
    assert done.returncode == 0, done.stderr
    # Each line: the tool, its plugin, its definition's size.
    assert dict(line.split()[:2] for line in done.stdout.splitlines()) == {"demo": "demo"}


def test_in_a_uv_project_the_printed_install_survives_uv_sync(tmp_path):
    """As a user of a clone would: a uv project's environment, the printed steps as printed, then uv sync."""
    assert shutil.which("uv"), "this test needs uv on PATH"
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0"\nrequires-python = ">=3.11"\ndependencies = ["fsmcp"]\n\n'
        '[dependency-groups]\ndev = ["pytest", "uv"]\n\n[tool.uv]\npackage = false\n\n'
        f'[tool.uv.sources]\nfsmcp = {{ path = "{REPO / "core"}", editable = true }}\n'
    )
    # From uv's cache, asking no index (UV_OFFLINE, for the printed steps too), unless the cache
    # lacks a package: then every step may fetch.
    offline = {"UV_OFFLINE": "1"}
    done = run(["uv", "sync", "--quiet", "--python", sys.executable], cwd=project, **offline)
    if done.returncode != 0:
        offline = {}
        done = run(["uv", "sync", "--quiet", "--python", sys.executable], cwd=project)
    assert done.returncode == 0, done.stderr
    python = project / ".venv" / "bin" / "python"
    work = tmp_path / "src"
    work.mkdir()
    rendered = run([python, "-m", "fsmcp", "new-plugin", "line_count"], cwd=work)
    assert rendered.returncode == 0, rendered.stderr
    basetemp = f"--basetemp={tmp_path / 'pytest'}"
    for line in rendered.stdout.splitlines()[2:]:
        step = run(["bash", "-c", line.strip()], cwd=work, PYTEST_ADDOPTS=basetemp, **offline)
        assert step.returncode == 0, (line, step.stdout, step.stderr)
    listed = run([python, "-m", "fsmcp", "plugins", tmp_path], cwd=work)
    assert "line_count" in listed.stdout, listed.stdout
    done = run(["uv", "sync", "--quiet"], cwd=project, **offline)
    assert done.returncode == 0, done.stderr
    listed = run([python, "-m", "fsmcp", "plugins", tmp_path], cwd=work)
    assert "fsmcp-line-count" in listed.stdout, (rendered.stdout, listed.stdout)
