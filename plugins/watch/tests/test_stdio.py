"""watch_file through the real server (``fsmcp serve`` over stdio), as installed through its entry point."""

from __future__ import annotations

import time

import anyio
import pytest
from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio


async def test_a_wait_over_stdio_answers_a_write_by_another_process_and_a_cancel_at_once(root, elsewhere):
    async with serve_stdio(str(root), "--enable", "watch") as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["watch_file"]
        assert tools.tools[0].annotations.read_only_hint is True
        await client.call_tool("watch_file", {"path": str(root)})

        out: dict = {}

        async def waiting() -> None:
            out["result"] = await client.call_tool("watch_file", {"path": str(root), "events": ["create"], "waitSeconds": 30})
            out["answered"] = time.time()

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.5)
            changed = await elsewhere(f"write:{root}/new.txt:hello")
        assert text_of(out["result"]) == f"create {root}/new.txt"
        assert out["answered"] - changed < 15  # woken by the change, well before the 30 s wait ends

        scope = anyio.CancelScope()

        async def abandoned() -> None:
            with scope:
                await client.call_tool("watch_file", {"path": str(root), "waitSeconds": 300})

        with anyio.fail_after(60):  # far below the 300 s wait: the cancel ended it
            async with anyio.create_task_group() as tg:
                tg.start_soon(abandoned)
                await anyio.sleep(0.5)
                scope.cancel()
        with anyio.fail_after(60):
            result = await client.call_tool("watch_file", {"path": str(root), "events": ["create"]})
        assert text_of(result) == "(no changes)"
