"""run_command through the real server (``fsmcp serve`` over stdio), as a client sees it."""

from __future__ import annotations

import anyio
import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

CONFIG = """
[plugins.shell]
allow = ["grep", "cat", "find", "sed", "awk", "sh"]
allow_unconfined = true
kill_grace = 0.5
"""


@pytest.fixture
def served(root, tmp_path):
    config = tmp_path / "fsmcp.toml"
    config.write_text(CONFIG)
    return lambda: serve_stdio(str(root), "--config", str(config), "--enable", "shell")


async def test_the_acceptance_round(root, outside, served):
    (root / "a.txt").write_text("alpha\nbeta\n" + "z" * 3000 + "\n")
    async with served() as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["run_command"]

        result = await client.call_tool("run_command", {"command": "grep", "args": ["-n", "beta", "a.txt"]})
        assert text_of(result) == "exit_code: 0\nstdout:\n2:beta\nstderr:"

        result = await client.call_tool("run_command", {"command": "rm", "args": ["a.txt"]})
        assert result.is_error
        assert text_of(result) == "COMMAND_NOT_ALLOWED: rm is not an allowed command. Allowed commands: awk, cat, find, grep, sed, sh"

        result = await client.call_tool("run_command", {"command": "grep", "args": ["alpha; rm a.txt | $(rm a.txt) `rm a.txt`", "a.txt"]})
        assert text_of(result).startswith("exit_code: 1 (non-zero") and (root / "a.txt").exists()

        result = await client.call_tool("run_command", {"command": "cat", "args": [str(outside / "secret.txt")]})
        assert result.is_error and text_of(result).startswith(f"ACCESS_DENIED: argument '{outside}/secret.txt' of cat is refused")

        for command, args in (("sed", ["-i", "s/a/b/", "a.txt"]), ("find", [".", "-delete"])):
            result = await client.call_tool("run_command", {"command": command, "args": args})
            assert result.is_error and text_of(result).startswith(f"COMMAND_NOT_ALLOWED: {command} argument ")
        result = await client.call_tool("run_command", {"command": "awk", "args": ['BEGIN { system("rm a.txt") }']})
        assert "fatal: 'system' function not allowed in sandbox mode" in text_of(result)
        assert (root / "a.txt").read_text().startswith("alpha")

        result = await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"], "maxOutputBytes": 100})
        assert "[stdout truncated: it wrote 3,012 bytes, the first 100 are kept" in text_of(result)


async def test_a_timeout_kills_the_whole_group_in_the_real_server(root, served, running, gone, new_marker):
    marker = new_marker()
    async with served() as client:
        with anyio.fail_after(20):
            result = await client.call_tool("run_command", {"command": "sh", "args": ["-c", f"sleep {marker} & sleep {marker}"], "timeout": 1})
        assert not result.is_error
        assert text_of(result).startswith("exit_code: none (killed by SIGTERM)\ntimed_out: true")
        await gone(marker)
        assert running(marker) == []


async def test_cancelling_in_the_real_server_kills_the_whole_group(root, served, running, gone, new_marker):
    marker = new_marker()
    async with served() as client:
        scope = anyio.CancelScope()

        async def run() -> None:
            with scope:
                await client.call_tool("run_command", {"command": "sh", "args": ["-c", f"sleep {marker} & sleep {marker}"]})

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(20):
                while len(running(marker)) < 2:
                    await anyio.sleep(0.02)
            scope.cancel()  # the SDK sends notifications/cancelled
        await gone(marker)
        with anyio.fail_after(30):
            result = await client.call_tool("run_command", {"command": "grep", "args": ["-c", "x", "/dev/null"]})
        assert result.is_error and "ACCESS_DENIED" in text_of(result)
