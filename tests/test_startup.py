"""What the real command says and does at start-up: configuration mistakes, read-only, roots."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fsmcp.testing import forked, serve_stdio, text_of

USAGE = 2


def fsmcp(*args: str | Path, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The real command, forked (``forked``): what it says and does at start-up is fsmcp's, not the interpreter's."""
    return subprocess.run(forked(*map(str, args)), check=False, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("first line\n")
    return root.resolve()


@pytest.mark.parametrize(
    ("option", "name"),
    [("--enable", "raed"), ("--disable", "write_fiel"), ("--disable", "read,wirte")],
)
def test_an_enable_or_disable_name_that_matches_nothing_stops_the_start(root, option, name):
    # serve would read stdin: the empty input is a client that leaves at once, so a start that
    # goes on exits 0, as it did before names were checked.
    done = fsmcp("serve", option, name, root, cwd=root)
    assert done.returncode == USAGE, done.stderr
    bad = next(n for n in name.split(",") if n not in ("read",))
    assert f"{option[2:]} names '{bad}', which is no installed plugin or tool; plugins: " in done.stderr
    assert "read" in done.stderr.split("plugins: ", 1)[1]


def test_a_tool_name_in_disable_still_narrows_an_enable_of_plugins(root):
    done = fsmcp("tools", "--enable", "read", "--disable", "read_file", root, cwd=root)
    assert done.returncode == 0, done.stderr
    offered = {line.split()[0] for line in done.stdout.splitlines()}
    assert "list_directory" in offered and "read_file" not in offered and "write_file" not in offered


def test_a_plugin_whose_options_fail_its_check_stops_the_start(root):
    config = root.parent / "fsmcp.toml"
    config.write_text('[plugins.shell]\nallow = ["git"]\n')
    done = fsmcp("serve", "--config", config, root, cwd=root)
    assert done.returncode == USAGE, done.stderr
    assert "[plugins.shell] configuration is wrong: allow lists git runs programs" in done.stderr
    assert "set allow_unconfined = true" in done.stderr


@pytest.mark.parametrize(("section", "problem"), [("watch", "engine must be one of"), ("archive", "max_members must be a positive integer")])
def test_other_plugins_check_their_options_at_start_up_too(root, section, problem):
    config = root.parent / "fsmcp.toml"
    config.write_text(f"[plugins.{section}]\n" + ('engine = "inotify"\n' if section == "watch" else "max_members = 0\n"))
    done = fsmcp("tools", "--config", config, root, cwd=root)
    assert done.returncode == USAGE, done.stdout
    assert f"[plugins.{section}] configuration {problem}" in done.stderr


def test_roots_given_as_one_string_in_the_config_file_stop_the_start(root):
    config = root.parent / "fsmcp.toml"
    config.write_text('roots = "work"\n')
    done = fsmcp("tools", "--config", config, cwd=root.parent)
    assert done.returncode == USAGE, done.stdout
    assert done.stderr == f'fsmcp: error: config file {config}: roots must be a list of directories, such as roots = ["work"]\n'


def test_serving_no_tool_at_all_warns_how_to_install_plugins(root):
    # Every installed plugin, whatever families there are (the host's own are "built in").
    installed = [line.split()[0] for line in fsmcp("plugins", root, cwd=root).stdout.splitlines() if "built in" not in line]
    done = fsmcp("serve", "--disable", ",".join(installed), root, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "fsmcp: warning: no tool is offered; install plugins into the environment fsmcp runs in" in done.stderr
    assert "fsmcp: serving 0 tools" in done.stderr


def test_read_only_says_so_at_start_up(root):
    done = fsmcp("serve", "--read-only", root, cwd=root)
    assert done.returncode == 0, done.stderr
    assert f"over stdio on {root} (read-only)" in done.stderr
    assert "read-write" not in done.stderr


@pytest.mark.anyio
async def test_read_only_tells_the_model_and_offers_no_tool_that_only_changes(root):
    async with serve_stdio("--read-only", str(root)) as client:
        assert f"{root} (read-only)" in client.instructions
        assert "The server is read-only: every change is refused (READ_ONLY)." in client.instructions
        assert "read-write" not in client.instructions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for gone in ("write_file", "edit_file", "delete_file", "move_file", "patch_apply", "extract_archive", "run_shell"):
            assert gone not in tools
        assert {"read_file", "list_directory", "grep_files", "batch_operations", "run_command"} <= set(tools)
        assert all(tool.annotations.read_only_hint for tool in tools.values())
        assert "The server is read-only" in tools["batch_operations"].description
        result = await client.call_tool(
            "batch_operations",
            {"operations": [{"tool": "read_file", "arguments": {"path": "notes.txt"}}, {"tool": "write_file", "arguments": {"path": "x", "content": ""}}]},
        )
        assert result.is_error
        assert "unknown tool 'write_file': it is not offered because the server is read-only" in text_of(result)
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]


def test_read_only_in_the_config_file_says_so_too(root):
    config = root.parent / "fsmcp.toml"
    config.write_text("read_only = true\n")
    done = fsmcp("tools", "--config", config, root, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "write_file" not in done.stdout and "read_file" in done.stdout


def test_call_takes_roots_after_its_options(root):
    done = fsmcp("call", "get_file_info", "-", "--format", "json", root, cwd=root.parent, stdin='{"path": "notes.txt"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data"]["path"] == str(root / "notes.txt")


def test_an_unknown_option_is_still_refused(root):
    done = fsmcp("call", "get_file_info", "-", "--colour", "red", root, cwd=root, stdin="{}")
    assert done.returncode == USAGE
    assert "unrecognized arguments: --colour" in done.stderr


@pytest.mark.parametrize(("table", "meant"), [("secret", "secrets"), ("shel", "shell")])
def test_an_unknown_plugin_table_stops_the_start_naming_the_known_ones(root, table, meant):
    # A misspelt table would silently drop the operator's options (a protected *.tfstate, say).
    config = root.parent / "fsmcp.toml"
    config.write_text(f'[plugins.{table}]\nadd = ["*.tfstate"]\n')
    for command in ("serve", "tools"):
        done = fsmcp(command, "--config", config, root, cwd=root)
        assert done.returncode == USAGE, (command, done.stderr)
        assert f"fsmcp.toml has a [plugins.{table}] table, but no installed plugin is named {table!r}" in done.stderr
        known = done.stderr.split("tables: ", 1)[1]
        assert meant in known and "read" in known and "secrets" in known, done.stderr


def test_the_table_of_a_disabled_plugin_is_known(root):
    config = root.parent / "fsmcp.toml"
    config.write_text('[plugins.shell]\nallow = ["ls"]\n[plugins.secrets]\nadd = ["*.tfstate"]\n')
    for args in (("--disable", "shell"), ("--enable", "read"), ("--disable", "secrets")):
        done = fsmcp("tools", "--config", config, *args, root, cwd=root)
        assert done.returncode == 0, (args, done.stderr)
