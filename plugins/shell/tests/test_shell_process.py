"""The child process: timeouts, the process group, cancellation, output caps and the budget."""

from __future__ import annotations

import json

import anyio
import pytest

import fsmcp_shell.hooks
from fsmcp.testing import connect, host_for

pytestmark = pytest.mark.anyio

SH = {"allow": ["sh", "cat", "sed", "awk"], "allow_unconfined": True, "kill_grace": 0.5}


def data_of(result) -> dict:
    return json.loads(result.content[0].text)["data"]


async def test_a_timeout_kills_the_command_and_its_children(root, call, ok, running, gone, new_marker):
    marker = new_marker()
    script = f"sleep {marker} & sleep {marker}"
    with anyio.fail_after(30):  # a regression must fail here, not hang the suite
        text = ok(await call({"command": "sh", "args": ["-c", script], "timeout": 1}, shell=SH))
    assert text.splitlines()[:2] == [
        "exit_code: none (killed by SIGTERM)",
        "timed_out: true (still running after 1 s: its process group got SIGTERM, then SIGKILL 0.5 s later if needed; "
        "the output below is what it wrote until then)",
    ]
    await gone(marker)
    assert running(marker) == []


async def test_a_command_that_ignores_sigterm_gets_sigkill(root, call, running, new_marker):
    marker = new_marker()
    with anyio.fail_after(30):
        result = await call({"command": "sh", "args": ["-c", f"trap '' TERM; echo started; sleep {marker}"], "timeout": 1}, shell=SH, format="json")
    data = data_of(result)
    assert (data["exitCode"], data["signal"], data["timedOut"], data["stdout"]) == (None, "SIGKILL", True, "started\n")
    assert running(marker) == []


async def test_background_children_do_not_outlive_a_finished_command(root, call, ok, running, new_marker):
    marker = new_marker()
    with anyio.fail_after(20):  # the sleeper holds the output pipes: the call must not wait for it
        text = ok(await call({"command": "sh", "args": ["-c", f"sleep {marker} & echo done"]}, shell=SH))
    assert text == "exit_code: 0\nstdout:\ndone\nstderr:"
    assert running(marker) == []


async def test_cancelling_the_call_kills_the_process_group(root, running, gone, new_marker):
    marker = new_marker()
    host = host_for([root], [("shell", fsmcp_shell.hooks)], plugins={"shell": SH})
    async with connect(host) as client:
        scope = anyio.CancelScope()
        outcome = []

        async def run() -> None:
            with scope:
                outcome.append(await client.call_tool("run_command", {"command": "sh", "args": ["-c", f"sleep {marker} & sleep {marker}"]}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(30):
                while len(running(marker)) < 2:
                    await anyio.sleep(0.02)
            scope.cancel()
        assert outcome == []
        await gone(marker)
        # The server is free at once for the next call.
        with anyio.fail_after(30):
            result = await client.call_tool("run_command", {"command": "cat", "args": ["/dev/null"]})
        assert result.is_error  # /dev/null lies outside the root: refused, answered


async def test_each_stream_is_capped_and_says_so(root, call, ok):
    (root / "big.txt").write_text("x" * 5000 + "\n")
    result = await call({"command": "sh", "args": ["-c", "cat big.txt; cat big.txt >&2"], "maxOutputBytes": 1024}, shell=SH, format="json")
    data = data_of(result)
    assert (data["stdoutTruncated"], data["stderrTruncated"]) == (True, True)
    assert (data["stdoutBytes"], data["stderrBytes"]) == (5001, 5001)
    assert data["stdout"] == "x" * 1024
    text = ok(await call({"command": "cat", "args": ["big.txt"], "maxOutputBytes": 1024}, shell=SH))
    assert "[stdout truncated: it wrote 5,001 bytes, the first 1,024 are kept (maxOutputBytes, at most 524,288)." in text
    short = await call({"command": "cat", "args": ["big.txt"], "maxOutputBytes": 10000}, shell=SH, format="json")
    assert data_of(short)["stdoutTruncated"] is False


async def test_a_character_cut_by_the_cap_is_left_out(root, call):
    (root / "u.txt").write_text("é" * 10)  # two bytes each
    data = data_of(await call({"command": "cat", "args": ["u.txt"], "maxOutputBytes": 5}, shell=SH, format="json"))
    assert data["stdout"] == "éé" and data["stdoutTruncated"]


async def test_output_is_held_to_the_budget(root, call, ok):
    (root / "lines.txt").write_text("".join(f"line {n:05}\n" for n in range(2000)))
    text = ok(await call({"command": "cat", "args": ["lines.txt"]}, shell=SH, budget=2000))
    assert len(text) <= 2000
    assert "[stdout cut to its first" in text and "characters to fit the output budget." in text
    assert text.splitlines()[2] == "line 00000"
    data = data_of(await call({"command": "cat", "args": ["lines.txt"]}, shell=SH, budget=2000, format="json"))
    assert data["stdoutTruncated"] and not data["stderrTruncated"] and data["stdoutBytes"] == 22000


async def test_a_short_stderr_survives_a_long_stdout(root, call, ok):
    (root / "lines.txt").write_text("".join(f"line {n:05}\n" for n in range(2000)))
    text = ok(await call({"command": "sh", "args": ["-c", "cat lines.txt; echo 'the one error' >&2; exit 3"]}, shell=SH, budget=2000))
    assert text.startswith("exit_code: 3 ") and text.endswith("stderr:\nthe one error")


async def test_progress_is_reported_while_a_command_runs(root, new_marker):
    seen = []

    async def progress(done, total, message):
        seen.append((done, total, message))

    host = host_for([root], [("shell", fsmcp_shell.hooks)], plugins={"shell": SH})
    async with connect(host) as client:
        # Ticks at 1 s and 2 s come before the 3-second deadline whatever the machine's speed.
        with anyio.fail_after(30):
            await client.call_tool("run_command", {"command": "sh", "args": ["-c", f"sleep {new_marker()}"], "timeout": 3}, progress_callback=progress)
    assert seen[:2] == [(1.0, 3.0, "sh has run for 1 s"), (2.0, 3.0, "sh has run for 2 s")]


async def test_diff_r_gets_no_dereference(root, call, ok, spawned):
    for d in ("a", "b"):
        (root / d).mkdir()
    ok(await call({"command": "diff", "args": ["-ru", "a", "b"]}))
    assert spawned[-1] == ["diff", "--no-dereference", "-ru", "a", "b"]
