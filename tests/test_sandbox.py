"""The kernel's side of confinement: a program that builds an outside path itself is refused,
and a kernel without Landlock is met as the operator chose (require withholds, auto warns once).

A kernel without Landlock is simulated honestly: ``without_landlock.py`` runs the real server
under a seccomp filter that makes ``landlock_create_ruleset`` fail as such a kernel does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fsmcp_shell.hooks
import pytest

from fsmcp.testing import connect, host_for, serve_stdio, text_of, tree_of

pytestmark = pytest.mark.anyio

SECRET = "SECRET-4b1e-beyond-the-root"
WITHOUT_LANDLOCK = Path(__file__).with_name("without_landlock.py")
STARTING = "glob_search, grep_files, run_command, search_files"
WITHHELD = "programs not started: this kernel offers no Landlock (sandbox = {mode}), so the tools that start them are not offered"

REACH = """#!/bin/sh
# Builds the outside path from where it runs: no argument names it, so no argument check sees it.
out="$(dirname "$PWD")/outside"
cat "$out/secret.txt"
ls "$out"
echo written > "$out/new.txt"
echo written > inside.txt
"""


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path, Path]:
    root, outside, bin_dir = tmp_path / "root", tmp_path / "outside", tmp_path / "bin"
    for d in (root, outside, bin_dir):
        d.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (bin_dir / "reach").write_text(REACH)
    (bin_dir / "reach").chmod(0o755)
    return root, outside, bin_dir


async def _reach(root: Path, bin_dir: Path, sandbox: str) -> str:
    options = {"allow": ["reach"], "path": f"{bin_dir}:/usr/bin:/bin"}
    host = host_for([root], [("shell", fsmcp_shell.hooks)], sandbox=sandbox, plugins={"shell": options})
    async with connect(host) as client:
        return text_of(await client.call_tool("run_command", {"command": "reach"}))


async def test_the_kernel_refuses_a_program_that_reaches_out_on_its_own(place):
    root, outside, bin_dir = place
    before = tree_of(outside)
    text = await _reach(root, bin_dir, "require")
    print(text)
    assert SECRET not in text
    assert text.count("Permission denied") == 3, text  # the read, the listing, the write
    assert tree_of(outside) == before
    assert (root / "inside.txt").read_text() == "written\n"  # the same program writes inside


async def test_unconfined_the_same_program_gets_out(place):
    """The control: with sandbox = off the program reads and writes outside."""
    root, outside, bin_dir = place
    text = await _reach(root, bin_dir, "off")
    assert SECRET in text
    assert (outside / "new.txt").exists()


def _without_landlock(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WITHOUT_LANDLOCK), "-m", "fsmcp", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120
    )


def test_require_withholds_the_tools_that_start_programs(tmp_path):
    done = _without_landlock("tools", "--sandbox", "require", str(tmp_path))
    print(done.stderr)
    offered = {line.split()[0] for line in done.stdout.splitlines()}
    assert done.returncode == 0
    assert "read_file" in offered and offered.isdisjoint(STARTING.split(", ")), offered
    assert f"sandbox = require, and this kernel offers no Landlock, so {STARTING} (which start programs) are not offered" in done.stderr


@pytest.mark.parametrize("mode", ["require", "auto"])
def test_the_plugin_list_says_so(tmp_path, mode):
    done = _without_landlock("plugins", "--sandbox", mode, str(tmp_path))
    assert f"fsmcp: {WITHHELD.format(mode=mode)}\n" in done.stderr, done.stderr
    assert "fsmcp: protected files: no program is started, so none reads them\n" in done.stderr, done.stderr
    assert "run_command (disabled)" in done.stdout and "grep_files (disabled)" in done.stdout, done.stdout


def test_with_off_the_plugin_list_says_programs_are_not_confined(tmp_path):
    done = _without_landlock("plugins", "--sandbox", "off", str(tmp_path))
    assert "fsmcp: programs NOT confined (sandbox = off)\n" in done.stderr, done.stderr
    assert "fsmcp: protected files NOT hidden from programs: only their arguments are checked\n" in done.stderr, done.stderr
    assert "run_command (disabled)" not in done.stdout and "run_command" in done.stdout, done.stdout


def test_auto_withholds_them_too(tmp_path):
    done = _without_landlock("tools", "--sandbox", "auto", str(tmp_path))
    print(done.stderr)
    offered = {line.split()[0] for line in done.stdout.splitlines()}
    assert done.returncode == 0
    assert "read_file" in offered and offered.isdisjoint(STARTING.split(", ")), offered
    assert f"sandbox = auto, and this kernel offers no Landlock, so {STARTING} (which start programs) are not offered" in done.stderr
    assert 'or set sandbox = "off" to offer them unconfined' in done.stderr


def test_auto_says_so_once_and_in_the_start_up_line(tmp_path):
    done = _without_landlock("serve", "--sandbox", "auto", str(tmp_path))
    print(done.stderr)
    assert done.stderr.count("this kernel offers no Landlock, so") == 1, done.stderr
    assert "tools over stdio" in done.stderr and WITHHELD.format(mode="auto") in done.stderr


@pytest.mark.parametrize(("sandbox", "offered"), [("auto", False), ("require", False), ("off", True)])
async def test_over_stdio_only_off_offers_run_command_and_run_shell_without_landlock(tmp_path, sandbox, offered):
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("inside\n")
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.shell]\nallow_shell = true\n")
    async with serve_stdio(str(root), "--config", str(config), "--enable", "shell", "--sandbox", sandbox, under=WITHOUT_LANDLOCK) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]})
    print(sandbox, names, text_of(result))
    assert (names == {"run_command", "run_shell"}) is offered, names
    assert result.is_error is not offered, text_of(result)


def test_off_is_quiet(tmp_path):
    done = _without_landlock("serve", "--sandbox", "off", str(tmp_path))
    assert "warning" not in done.stderr
    assert "programs NOT confined (sandbox = off)" in done.stderr


def test_with_landlock_the_start_up_line_names_the_abi(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fsmcp", "plugins", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert "fsmcp: programs confined by Landlock ABI " in done.stderr, done.stderr
