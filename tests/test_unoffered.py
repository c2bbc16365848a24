"""A call of a tool the operator did not offer says why (read-only, disabled, not enabled, no sandbox)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fsmcp.testing import ToolCalls, serve_stdio

pytestmark = pytest.mark.anyio

WITHOUT_LANDLOCK = Path(__file__).with_name("without_landlock.py")
READ_ONLY = (
    "INVALID_PARAMS: unknown tool 'write_file': it is not offered because the server is read-only (--read-only, or "
    "read_only = true in the configuration) and this tool changes files; only the operator can change that, by "
    "restarting the server"
)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--read-only"], READ_ONLY),
        (["--disable", "write"], "; the plugin write is not loaded (disabled): only the operator can change that, by restarting the server"),
        (["--disable", "write_file"], "unknown tool 'write_file': it is not offered because it is disabled (--disable write_file, or disable in the configuration)"),
        (["--enable", "read,search"], "not loaded (enable names only read, search): only the operator can change that, by restarting the server"),
        (["--enable", "read,write_files"], "unknown tool 'write_file': it is not offered because the server offers only what enable names (read, write_files), and neither write_file nor its plugin 'write'"),
    ],
)
async def test_a_client_calling_a_withheld_tool_is_told_why(root, options, said):
    async with serve_stdio(*options, str(root)) as client:
        s = ToolCalls(client)
        text = await s.fail("write_file", "INVALID_PARAMS", path="b.txt", content="x")
        if "--enable" not in options:  # batch_operations is offered: its step is told the same
            step = {"tool": "write_file", "arguments": {"path": "b.txt", "content": "x"}}
            batch = await s.fail("batch_operations", "INVALID_PARAMS", operations=[step])
            assert said.removeprefix("INVALID_PARAMS: ") in batch, batch
    assert said in text, text
    # The reason, not a list to guess from; a plugin left out is never imported to learn its
    # tools, so then the list and the plugins not loaded.
    assert ("this server offers" in text) == ("not loaded" in said), text
    assert not (root / "b.txt").exists()


async def test_a_tool_no_plugin_has_still_gets_the_list_of_offered_ones(root):
    async with serve_stdio("--read-only", str(root)) as client:
        text = await ToolCalls(client).fail("write_fiel", "INVALID_PARAMS", path="b.txt")
    assert text.startswith("INVALID_PARAMS: unknown tool 'write_fiel'; this server offers: "), text
    assert "read_file" in text


async def test_without_landlock_a_tool_that_starts_programs_says_the_kernel_cannot_confine_it(root):
    async with serve_stdio(str(root), "--sandbox", "auto", under=WITHOUT_LANDLOCK) as client:
        text = await ToolCalls(client).fail("run_command", "INVALID_PARAMS", command="cat", args=["a.txt"])
    assert "unknown tool 'run_command': it is not offered because it starts programs, and this kernel cannot confine them (sandbox = auto; Landlock is missing)" in text, text


def test_fsmcp_call_of_a_withheld_tool_exits_2_and_says_why(root):
    done = subprocess.run(
        [sys.executable, "-m", "fsmcp", "call", "write_file", '{"path": "b.txt", "content": "x"}', str(root), "--read-only"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "fsmcp: error: " + READ_ONLY.removeprefix("INVALID_PARAMS: ") + "\n", done.stderr
    assert not (root / "b.txt").exists()
