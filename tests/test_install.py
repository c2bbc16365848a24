"""Each plugin installs on its own: real virtual environments, real ``fsmcp`` processes.

The venvs are built with ``uv``, each once a session (conftest's ``built_once``: the test processes share
it, whichever of them needs it first builds it); the packages are the wheels of this repository's
source trees (conftest's ``wheel``, built once a session), their dependencies come from uv's
cache, or the package index when the cache lacks one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from fsmcp.testing import forked, text_of

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "plugin-template"
READ_TOOLS = {
    "read_file",
    "read_multiple_files",
    "list_directory",
    "directory_tree",
    "get_file_info",
    "list_allowed_directories",
}
TIMEOUT = 300  # a cold uv cache downloads every dependency once


def run(command: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    # Without the session's PYTHONPATH (conftest.py), which would add the template to every venv.
    # With bytecode written (whatever PYTHONDONTWRITEBYTECODE says): a venv's later processes
    # (the servers, the template's pytest) then find compiled what its first ones imported.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )


def tools_of(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """``fsmcp tools`` output as {tool: plugin} (each line: tool, plugin, definition size)."""
    assert result.returncode == 0, result.stderr
    return dict(line.split()[:2] for line in result.stdout.splitlines())


@dataclass
class Venv:
    path: Path
    work: Path
    """A directory to run in, that is also the allowed root (never the repository: ``-m`` imports from the cwd)."""

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @classmethod
    def create(cls, path: Path) -> Venv:
        assert shutil.which("uv"), "these tests need uv on PATH"
        work = path.parent / f"{path.name}-work"
        work.mkdir()
        done = run(["uv", "venv", "--quiet", "--python", sys.executable, path], cwd=work)
        assert done.returncode == 0, done.stderr
        return cls(path, work)

    def install(self, *projects: Path | str) -> None:
        install = ["uv", "pip", "install", "--quiet", "--python", self.python, *projects]
        done = run([*install, "--offline"], cwd=self.work)  # from uv's cache, asking no index
        if done.returncode != 0:  # a dependency not in the cache yet: fetched
            done = run(install, cwd=self.work)
        assert done.returncode == 0, done.stderr

    def packages(self) -> dict[str, str]:
        done = run(["uv", "pip", "list", "--python", self.python, "--format", "json"], cwd=self.work)
        assert done.returncode == 0, done.stderr
        return {p["name"]: p["version"] for p in json.loads(done.stdout)}

    def fsmcp(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run([self.python, "-m", "fsmcp", *args], cwd=self.work)

    @classmethod
    def of(cls, fields: dict[str, str]) -> Venv:
        return cls(Path(fields["path"]), Path(fields["work"]))

    def fields(self) -> dict[str, str]:
        return {"path": str(self.path), "work": str(self.work)}

    def stdio(self, *serve_args: str) -> Client:
        params = StdioServerParameters(
            command=str(self.python), args=["-m", "fsmcp", "serve", str(self.work), *serve_args], cwd=str(self.work)
        )
        return Client(params)


def make_plugin(where: Path, name: str, hooks_source: str) -> Path:
    """A throwaway plugin distribution ``fsmcp-<name>`` with entry point ``<name>``."""
    package = f"fsmcp_{name}"
    project = where / f"fsmcp-{name}"
    (project / "src" / package).mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [project]
            name = "fsmcp-{name}"
            version = "0.1.0"
            dependencies = ["fsmcp"]

            [project.entry-points.fsmcp]
            {name} = "{package}.hooks"

            [build-system]
            requires = ["hatchling>=1.24"]
            build-backend = "hatchling.build"

            [tool.hatch.build.targets.wheel]
            packages = ["src/{package}"]
            """)
    )
    (project / "src" / package / "__init__.py").write_text("")
    (project / "src" / package / "hooks.py").write_text(textwrap.dedent(hooks_source))
    return project


TWIN_HOOKS = """\
    from fsmcp import READ_ONLY, Tool, ToolInput, hookimpl


    class Nothing(ToolInput):
        pass


    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("twin", "A tool name two plugins claim.", Nothing, lambda args, ctx: "hi", READ_ONLY))
    """


# ---------------------------------------------------------------------------------------------
# core + read alone, then the template added
# ---------------------------------------------------------------------------------------------


@dataclass
class Separate:
    venv: Venv
    tools_before: dict[str, str]
    tools_after: dict[str, str]
    packages_before: dict[str, str]
    packages_after: dict[str, str]
    plugins_after: str


@pytest.fixture(scope="module")
def separate(built_once: Callable[[str, Callable[[Path], Any]], Any], wheel: Callable[[str], Path]) -> Separate:
    def build(where: Path) -> dict[str, Any]:
        venv = Venv.create(where / "venv")
        venv.install(wheel("fsmcp"), wheel("fsmcp-read"))
        tools_before, packages_before = tools_of(venv.fsmcp("tools", str(venv.work))), venv.packages()
        venv.install(wheel("fsmcp-wordcount"))
        built = Separate(
            venv,
            tools_before,
            tools_of(venv.fsmcp("tools", str(venv.work))),
            packages_before,
            venv.packages(),
            venv.fsmcp("plugins", str(venv.work)).stdout,
        )
        # What a third party adds to run the template's tests, installed here and not by that
        # test: the other tests may use the venv at the same time, in another process.
        venv.install("pytest>=8")
        return {**asdict(built), "venv": venv.fields()}

    fields = built_once("separate", build)
    return Separate(**{**fields, "venv": Venv.of(fields["venv"])})


def test_core_and_read_alone_offer_exactly_the_read_tools(separate):
    assert set(separate.tools_before) == READ_TOOLS
    assert set(separate.tools_before.values()) == {"read"}


def test_installing_the_template_adds_word_count_and_nothing_else(separate):
    assert separate.tools_after == {**separate.tools_before, "word_count": "wordcount"}
    added = set(separate.packages_after) - set(separate.packages_before)
    assert added == {"fsmcp-wordcount"}
    assert {k: v for k, v in separate.packages_after.items() if k in separate.packages_before} == separate.packages_before
    (line,) = [line for line in separate.plugins_after.splitlines() if line.startswith("wordcount ")]
    assert line.split()[1:4] == ["fsmcp-wordcount", "0.1.0", "enabled"]


@pytest.mark.anyio
async def test_word_count_answers_over_stdio_in_that_venv(separate):
    (separate.venv.work / "poem.txt").write_text("so much depends\nupon\n")
    async with separate.venv.stdio() as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("word_count", {"path": "poem.txt"})
    real = separate.venv.work.resolve()
    assert text_of(result) == f"{real}/poem.txt: 2 lines, 4 words, 21 bytes, 21 characters"
    assert not result.is_error
    assert listed == READ_TOOLS | {"word_count"}


def test_the_template_tests_pass_where_a_third_party_runs_them(separate):
    venv = separate.venv
    copy = venv.work / "wordcount-tests"
    shutil.copytree(TEMPLATE / "tests", copy / "tests")
    done = run([venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={copy / 'tmp'}", "tests"], cwd=copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout


# ---------------------------------------------------------------------------------------------
# --enable / --disable, in the development environment with every plugin installed
# ---------------------------------------------------------------------------------------------


def dev_tools(tmp_path: Path, *args: str) -> dict[str, str]:
    # Forked from the test process's fork server (the session's PYTHONPATH: the template too).
    return tools_of(subprocess.run(forked("tools", str(tmp_path), *args), cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL))


def test_disable_a_plugin_hides_its_tools_and_nothing_else(tmp_path):
    everything = dev_tools(tmp_path)
    assert "write" in everything.values(), "the write plugin registers no tools"
    assert dev_tools(tmp_path, "--disable", "write") == {t: p for t, p in everything.items() if p != "write"}


def test_disable_a_tool_hides_that_tool_and_nothing_else(tmp_path):
    everything = dev_tools(tmp_path)
    assert everything.get("delete_file") == "write"
    assert dev_tools(tmp_path, "--disable", "delete_file") == {t: p for t, p in everything.items() if t != "delete_file"}


def test_enable_a_plugin_offers_only_its_tools(tmp_path):
    assert dev_tools(tmp_path, "--enable", "read") == dict.fromkeys(READ_TOOLS, "read")


# ---------------------------------------------------------------------------------------------
# Plugins that go wrong
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def with_broken(built_once: Callable[[str, Callable[[Path], Any]], Any], wheel: Callable[[str], Path]) -> Venv:
    def build(where: Path) -> dict[str, str]:
        broken = make_plugin(where, "broken", 'raise RuntimeError("the broken plugin cannot import")\n')
        venv = Venv.create(where / "venv")
        venv.install(wheel("fsmcp"), wheel("fsmcp-read"), broken)
        return venv.fields()

    return Venv.of(built_once("broken", build))


def test_a_plugin_that_fails_to_import_is_reported_and_skipped(with_broken):
    listed = with_broken.fsmcp("tools", str(with_broken.work))
    assert (
        "plugin 'broken' (fsmcp-broken 0.1.0) failed to import and was skipped: "
        "RuntimeError: the broken plugin cannot import" in listed.stderr
    )
    plugins = with_broken.fsmcp("plugins", str(with_broken.work)).stdout
    assert "failed: RuntimeError: the broken plugin cannot import" in plugins
    assert tools_of(listed) == dict.fromkeys(READ_TOOLS, "read")


@pytest.mark.anyio
async def test_the_server_still_starts_beside_a_broken_plugin(with_broken):
    (with_broken.work / "a.txt").write_text("here\n")
    async with with_broken.stdio() as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("list_allowed_directories", {})
    assert not result.is_error and str(with_broken.work.resolve()) in text_of(result)
    assert listed == READ_TOOLS


@pytest.fixture(scope="module")
def with_twins(built_once: Callable[[str, Callable[[Path], Any]], Any], wheel: Callable[[str], Path]) -> Venv:
    def build(where: Path) -> dict[str, str]:
        twins = [make_plugin(where, name, TWIN_HOOKS) for name in ("twina", "twinb")]
        venv = Venv.create(where / "venv")
        venv.install(wheel("fsmcp"), wheel("fsmcp-read"), *twins)
        return venv.fields()

    return Venv.of(built_once("twins", build))


@pytest.mark.parametrize("command", ["serve", "tools"])
def test_two_plugins_registering_one_tool_name_stop_start_up(with_twins, command):
    done = with_twins.fsmcp(command, str(with_twins.work))
    assert done.returncode == 2
    assert done.stdout == ""
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("fsmcp: error:")]
    assert "tool 'twin' is registered by both plugin" in error
    assert "'twina' (fsmcp-twina 0.1.0)" in error and "'twinb' (fsmcp-twinb 0.1.0)" in error
