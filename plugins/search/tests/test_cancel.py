"""Cancelling a search through the real server (``fsmcp serve`` over stdio)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

SOURCE = "".join(f"def function_{n}(value):\n    return value * {n}  # plain source text\n" for n in range(40))


def large_tree(root: Path, files: int = 6000) -> None:
    for n in range(files):
        folder = root / f"pkg{n % 60:02}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{n}.py").write_text(SOURCE)
    # ripgrep reads every .gitignore it meets, and a FIFO never answers: whatever the machine's
    # speed, the search is still running when the cancel arrives, and runs on until killed.
    stall = root / "pkg59" / "stall"
    stall.mkdir()
    os.mkfifo(stall / ".gitignore")


def server_pid(root: Path, process_children) -> int:
    for pid in process_children(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(root).encode() in argv:
            return pid
    raise AssertionError("the fsmcp server process was not found")


async def test_cancelled_grep_kills_ripgrep_and_the_server_answers_at_once(root, process_children, ripgrep_children):
    large_tree(root)
    (root / "small").mkdir()
    (root / "small" / "a.txt").write_text("needle\n")
    async with serve_stdio(str(root), "--enable", "search", fresh=True) as client:
        server = server_pid(root, process_children)
        search = anyio.CancelScope()
        outcome: list[object] = []

        async def grep() -> None:
            with search:
                # Rare matches: ripgrep has nothing to write, so no broken pipe ends it by chance.
                outcome.append(await client.call_tool("grep_files", {"regex": r"value \* 1000\b", "directory": str(root)}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(grep)
            with anyio.fail_after(30):
                while not ripgrep_children(server):
                    await anyio.sleep(0.02)
            search.cancel()  # the SDK sends notifications/cancelled for the abandoned request
        assert outcome == [] and search.cancelled_caught

        with anyio.fail_after(30):
            tools = await client.list_tools()
        assert {t.name for t in tools.tools} == {"search_files", "glob_search", "grep_files"}
        with anyio.fail_after(30):
            while ripgrep_children(server):
                await anyio.sleep(0.02)

        with anyio.fail_after(30):
            result = await client.call_tool("grep_files", {"regex": "needle", "directory": str(root / "small")})
        assert text_of(result) == f"{root}/small/a.txt:1:needle\n[1 matches]"
        assert ripgrep_children(server) == []
