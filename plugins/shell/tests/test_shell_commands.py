"""run_command through the SDK's client: the allowlist, the output, the working directory."""

from __future__ import annotations

import json

import pytest

import fsmcp_shell.hooks
from fsmcp.run.host import HostError
from fsmcp.testing import connect, host_for

pytestmark = pytest.mark.anyio

DEFAULT = ["awk", "cat", "cut", "diff", "du", "file", "find", "grep", "head", "ls", "rg", "sed", "sort", "stat", "tail", "tr", "uniq", "wc"]


async def test_an_allowed_command_runs_and_reports_its_output(root, call, ok):
    (root / "a.txt").write_text("one\nTODO two\nthree\n")
    text = ok(await call({"command": "grep", "args": ["-n", "TODO", "a.txt"]}))
    assert text == "exit_code: 0\nstdout:\n2:TODO two\nstderr:"


async def test_a_non_zero_exit_is_a_result_with_stderr(root, call, ok):
    text = ok(await call({"command": "ls", "args": ["missing"]}))
    first, rest = text.split("\n", 1)
    assert first == "exit_code: 2 (non-zero: the command ran and reported a failure; this is its result, not a server error)"
    assert rest.startswith("stdout:\nstderr:\nls: cannot access 'missing': No such file or directory")


async def test_no_match_is_exit_code_one_not_an_error(root, call, ok):
    (root / "a.txt").write_text("one\n")
    assert ok(await call({"command": "grep", "args": ["absent", "a.txt"]})).startswith("exit_code: 1 (non-zero")


@pytest.mark.parametrize("command", ["bash", "sh", "python3", "rm", "touch", "env", "xargs"])
async def test_a_command_outside_the_allowlist_is_refused_with_the_list(call, failure, command, spawned):
    code, message = failure(await call({"command": command, "args": ["-c", "id"]}))
    assert code == "COMMAND_NOT_ALLOWED"
    assert message == f"{command} is not an allowed command. Allowed commands: {', '.join(DEFAULT)}"
    assert spawned == []


@pytest.mark.parametrize("command", ["/bin/ls", "./ls", "../bin/ls", "bin/ls", ".", ".."])
async def test_a_path_cannot_name_the_program(call, failure, command, spawned):
    code, message = failure(await call({"command": command}))
    assert code == "COMMAND_NOT_ALLOWED"
    assert "give a bare command name" in message and "Allowed commands: awk" in message
    assert spawned == []


async def test_a_whole_command_line_in_command_gets_a_hint(call, failure):
    code, message = failure(await call({"command": "grep -n x a.txt"}))
    assert code == "INVALID_PARAMS"
    assert '{"command": "grep", "args": ["-n", "x", "a.txt"]}' in message


async def test_args_as_one_string_is_refused_not_split(call, failure):
    code, message = failure(await call({"command": "ls", "args": "-la src"}))
    assert code == "INVALID_PARAMS" and "one string per argument" in message


@pytest.mark.parametrize(("arg", "problem"), [("a\x00b", "NUL byte"), ("a\ud800b", "lone surrogate (\\ud800)")])
async def test_an_argument_no_program_can_receive_is_refused(call, failure, spawned, arg, problem):
    code, message = failure(await call({"command": "cat", "args": [arg]}))
    assert code == "INVALID_PARAMS" and problem in message
    assert spawned == []


async def test_shell_metacharacters_reach_the_program_as_literal_arguments(root, call, ok, tmp_path):
    marker = tmp_path / "pwned"
    hostile = [f"; touch {marker}", f"| touch {marker}", f"$(touch {marker})", f"`touch {marker}`", f"&& touch {marker}", "*", "$HOME"]
    text = ok(await call({"command": "cat", "args": hostile}))
    for arg in hostile:
        assert f"cat: '{arg}': No such file or directory" in text or f"cat: {arg}: No such file or directory" in text
    assert not marker.exists()


async def test_globs_and_tilde_are_not_expanded(root, call, ok):
    (root / "a.txt").write_text("x\n")
    (root / "~").mkdir()
    (root / "~" / "note").write_text("tilde is a plain directory name\n")
    assert "No such file" in ok(await call({"command": "cat", "args": ["*.txt"]}))
    assert "tilde is a plain directory name" in ok(await call({"command": "cat", "args": ["~/note"]}))


async def test_the_working_directory_defaults_to_the_workspace(root, call, ok):
    (root / "here.txt").write_text("")
    assert ok(await call({"command": "ls"})) == "exit_code: 0\nstdout:\nhere.txt\nstderr:"


async def test_a_relative_working_directory_and_relative_arguments(root, call, ok, failure):
    (root / "sub").mkdir()
    (root / "sub" / "in-sub.txt").write_text("sub\n")
    (root / "top.txt").write_text("top\n")
    assert ok(await call({"command": "ls", "workingDirectory": "sub"})) == "exit_code: 0\nstdout:\nin-sub.txt\nstderr:"
    assert "top" in ok(await call({"command": "cat", "args": ["../top.txt"], "cwd": "sub"}))
    code, message = failure(await call({"command": "cat", "args": ["../../outside/secret.txt"], "workingDirectory": "sub"}))
    assert code == "ACCESS_DENIED" and message.startswith("argument '../../outside/secret.txt' of cat is refused")


async def test_a_working_directory_outside_missing_or_a_file(root, outside, call, failure):
    (root / "f.txt").write_text("")
    assert failure(await call({"command": "ls", "workingDirectory": str(outside)}))[0] == "ACCESS_DENIED"
    assert failure(await call({"command": "ls", "workingDirectory": "nope"}))[0] == "NOT_FOUND"
    assert failure(await call({"command": "ls", "workingDirectory": "f.txt"}))[0] == "NOT_DIRECTORY"


async def test_the_environment_is_minimal(root, call, ok, monkeypatch):
    monkeypatch.setenv("FSMCP_TEST_SECRET", "hunter2")
    text = ok(await call({"command": "env"}, shell={"allow": ["env"], "allow_unconfined": True, "env": {"LC_ALL": "C"}}))
    names = {line.split("=", 1)[0] for line in text.split("stdout:\n", 1)[1].split("\nstderr:")[0].splitlines()}
    assert names == {"PATH", "HOME", "LANG", "LC_ALL"}


async def test_a_program_on_a_path_inside_a_root_is_never_run(root, call, failure, spawned):
    bin_dir = root / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "grep"
    fake.write_text("#!/bin/sh\necho planted\n")
    fake.chmod(0o755)
    code, message = failure(await call({"command": "grep", "args": ["x"]}, shell={"path": f"{bin_dir}:/nonexistent"}))
    assert code == "NOT_FOUND" and "not installed" in message
    assert spawned == []


async def test_timeout_past_the_limit_and_other_servers_names(root, call, ok, failure):
    code, message = failure(await call({"command": "ls", "timeout": 61}))
    assert code == "INVALID_PARAMS" and "limit of 60 s" in message
    assert ok(await call({"command": "ls", "timeout": 90}, shell={"max_timeout": 120})).startswith("exit_code: 0")
    assert ok(await call({"command": "ls", "timeoutMs": 5000})).startswith("exit_code: 0")


async def test_data_carries_the_same_facts(root, call):
    (root / "a.txt").write_text("hello\n")
    result = await call({"command": "cat", "args": ["a.txt", "missing"]}, format="json")
    data = json.loads(result.content[0].text)["data"]
    assert data == {
        "command": "cat",
        "args": ["a.txt", "missing"],
        "cwd": str(root),
        "exitCode": 1,
        "signal": None,
        "timedOut": False,
        "stdout": "hello\n",
        "stderr": "cat: missing: No such file or directory\n",
        "stdoutTruncated": False,
        "stderrTruncated": False,
        "stdoutBytes": 6,
        "stderrBytes": 40,
    }


# -- configuration ------------------------------------------------------------------------------


def tools_of(root, shell: dict, **settings) -> dict:
    host = host_for([root], [("shell", fsmcp_shell.hooks)], plugins={"shell": shell}, **settings)
    return host.tools


def test_the_default_allowlist_is_read_only_and_says_so(root):
    tool = tools_of(root, {})["run_command"]
    assert tool.annotations.read_only and not tool.annotations.destructive and not tool.annotations.open_world
    assert "no shell: " + ", ".join(DEFAULT) + "." in tool.description


def test_a_command_that_may_write_makes_the_tool_destructive(root):
    tool = tools_of(root, {"allow": ["grep", "touch"]})["run_command"]
    assert not tool.annotations.read_only and tool.annotations.destructive and not tool.annotations.idempotent
    assert tools_of(root, {"allow": ["touch"]}, read_only=True)["run_command"].annotations.read_only


@pytest.mark.parametrize(
    ("shell", "problem"),
    [
        ({"allow": ["sh"]}, "sh is a shell: it runs any command"),
        ({"allow": ["grep", "xargs"]}, "xargs runs the command named in its arguments"),
        ({"allow": ["python3.12"]}, "python3.12 is an interpreter"),
        ({"allow": ["git"]}, "git runs programs from its input or configuration"),
        ({"allow": ["/bin/ls"]}, "bare program name"),
        ({"allow": "grep"}, "allow: "),
        ({"alow": ["grep"]}, "alow: unknown setting"),
        ({"max_timeout": 0}, "max_timeout: "),
    ],
)
def test_an_unusable_configuration_stops_the_start_and_says_why(root, shell, problem):
    with pytest.raises(HostError) as info:
        tools_of(root, shell)
    assert problem in str(info.value) and "[plugins.shell] configuration is wrong" in str(info.value)


# Each of these ran `id` through run_command once allowed (an attack pass: `prlimit id`,
# `setpriv id`, `sqlite3 :memory: ".shell id"`, `cmake -P`, `zip -TT`, `fakeroot id`), or runs a
# program it is given as plainly (a compiler's -wrapper, a loader, a multiplexer).
@pytest.mark.parametrize(
    "name",
    ["prlimit", "setpriv", "fakeroot", "sg", "runcon", "valgrind", "tmux", "screen", "npx", "ld.so", "ld-linux-x86-64.so.2", "ldd",
     "sqlite3", "cmake", "zip", "perldoc", "perlbug", "pydoc3", "npm", "gcc", "cc", "c89-gcc", "g++", "clang", "gcc-12", "x86_64-linux-gnu-gcc-12", "tcc"],
)
def test_commands_that_run_other_programs_are_unconfined_too(root, name):
    with pytest.raises(HostError) as info:
        tools_of(root, {"allow": ["grep", name]})
    assert f"allow lists {name} " in str(info.value) and "allow_unconfined = true" in str(info.value)


def test_unconfined_commands_need_the_operators_explicit_consent(root):
    assert "run_command" in tools_of(root, {"allow": ["sh"], "allow_unconfined": True})


def test_run_shell_is_offered_only_when_the_operator_enables_it(root):
    assert set(tools_of(root, {})) == {"run_command"}
    tools = tools_of(root, {"allow_shell": True})
    assert set(tools) == {"run_command", "run_shell"} and tools["run_shell"].annotations.destructive


async def test_run_shell_runs_a_command_line(root, call, ok):
    (root / "a.txt").write_text("b\na\nb\n")
    text = ok(await call({"command": "sort a.txt | uniq -c | sort -rn"}, tool="run_shell", shell={"allow_shell": True}))
    assert text.split("stdout:\n")[1].split()[:4] == ["2", "b", "1", "a"]


async def test_run_shell_needs_a_writable_working_directory(root, call, failure):
    code, message = failure(await call({"command": "true"}, tool="run_shell", shell={"allow_shell": True}, roots=[f"{root}:ro"]))
    assert code == "READ_ONLY" and "is a read-only root" in message
    assert "run_shell" not in tools_of(root, {"allow_shell": True}, read_only=True)


async def test_an_unknown_tool_when_the_shell_is_off(root):
    host = host_for([root], [("shell", fsmcp_shell.hooks)])
    async with connect(host) as client:
        result = await client.call_tool("run_shell", {"command": "id"})
    assert result.is_error and result.content[0].text.startswith("INVALID_PARAMS: unknown tool 'run_shell'")
