"""A failed transactional batch that moved a file away, after another session wrote a new file
at the vacated name: the rollback keeps the other session's file (as promised) but must not
destroy the moved file's content with nothing left of it (no update lost, the batch's source
included).

Ordered as tests/test_transactional_rollback_others.py: a tool of the test holds ``f.txt``'s lock
so the batch's second step waits while the other session writes ``a.txt``.
"""

from __future__ import annotations

import threading

import anyio
import fsmcp_batch.hooks
import fsmcp_read.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import OVERWRITES, Tool, ToolInput, hookimpl
from fsmcp.testing import connect, host_for, text_of

HOLDING = threading.Event()
RELEASE = threading.Event()


class HoldInput(ToolInput):
    path: str


def hold(args, ctx):
    ctx.hold(ctx.fs.resolve(args.path))
    HOLDING.set()
    for _ in range(6000):  # bounded by count, not time
        if RELEASE.wait(0.01):
            break
        ctx.check_cancelled()
    return "released"


class Holds:
    @hookimpl
    def fsmcp_register_tools(self, register):
        register(Tool(name="hold_file", description="holds a file's lock", input_model=HoldInput, function=hold, annotations=OVERWRITES))


PLUGINS = [(n, m.hooks) for n, m in [("read", fsmcp_read), ("write", fsmcp_write), ("batch", fsmcp_batch)]]


@pytest.mark.anyio
async def test_a_rollback_that_keeps_the_vacated_name_does_not_destroy_the_moved_file(tmp_path):
    HOLDING.clear()
    RELEASE.clear()
    root = tmp_path.resolve()
    (root / "a.txt").write_text("the original, before the batch")
    (root / "f.txt").write_text("f")
    host = host_for([root], [*PLUGINS, ("holds", Holds())])
    outcome = {}
    async with connect(host) as holder, connect(host) as batcher, connect(host) as other:
        async with anyio.create_task_group() as tg:

            async def holding():
                outcome["hold"] = await holder.call_tool("hold_file", {"path": "f.txt"})

            async def batch():
                outcome["batch"] = await batcher.call_tool("batch_operations", {"transactional": True, "operations": [
                    {"tool": "move_file", "arguments": {"source": "a.txt", "destination": "b.txt"}},
                    {"tool": "write_file", "arguments": {"path": "f.txt", "content": "x", "expectedVersion": "0000000000000000"}},
                ]})  # fmt: skip

            tg.start_soon(holding)
            for _ in range(6000):
                if HOLDING.is_set():
                    break
                await anyio.sleep(0.01)
            tg.start_soon(batch)
            for _ in range(6000):  # the first step done, the second waiting for f.txt
                if (root / "b.txt").exists():
                    break
                await anyio.sleep(0.01)
            written = await other.call_tool("write_file", {"path": "a.txt", "content": "the other session's new file"})
            assert not written.is_error, text_of(written)
            RELEASE.set()
    text = text_of(outcome["batch"])
    print("batch:", text)
    contents = {p.name: p.read_text() for p in root.iterdir() if p.is_file()}
    print("files after the rollback:", contents)
    assert text.startswith("EDIT_CONFLICT: Batch stopped at operation 2"), text
    assert contents.get("a.txt") == "the other session's new file"
    assert "the original, before the batch" in contents.values(), "the rollback destroyed the file the batch had moved"
