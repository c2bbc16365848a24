"""A transactional batch's rollback does not destroy another session's change made between its steps.

A batch step's locks end with the step, so another call may change a file the batch changed
before a later step fails. The rollback then put back the file as it was before the batch,
without a word and without a journal entry: the other session's change is gone and nothing
can undo that (its own journal entry holds what it replaced, not what it wrote). It should be
kept (as ``undo_change`` refuses a path changed since, EDIT_CONFLICT) or the overwrite journaled;
this test asks for the first.

Ordered without timing: a tool of the test holds ``f.txt``'s lock until released, so the batch's
second step waits for it while the other session writes ``a.txt``.
"""

from __future__ import annotations

import threading

import anyio
import fsmcp_batch.hooks
import fsmcp_history.hooks
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


PLUGINS = [(n, m.hooks) for n, m in [("read", fsmcp_read), ("write", fsmcp_write), ("batch", fsmcp_batch), ("history", fsmcp_history)]]


async def batch_failing_while_another_writes(root, first: dict, path: str) -> str:
    """A transactional batch of ``first`` then a write of ``f.txt`` that fails once it gets the lock
    a test tool holds; between the two, once the batch said (progress) that ``first`` is done,
    another session writes ``path``. Returns the batch's answer."""
    HOLDING.clear()
    RELEASE.clear()
    host = host_for([root], [*PLUGINS, ("holds", Holds())])
    outcome = {}
    first_done = anyio.Event()

    async def progressed(progress, total, message):
        if progress >= 1:
            first_done.set()

    async with connect(host) as holder, connect(host) as batcher, connect(host) as other:
        async with anyio.create_task_group() as tg:

            async def holding():
                outcome["hold"] = await holder.call_tool("hold_file", {"path": "f.txt"})

            async def batch():
                outcome["batch"] = await batcher.call_tool("batch_operations", {"transactional": True, "operations": [
                    first,
                    {"tool": "write_file", "arguments": {"path": "f.txt", "content": "x", "expectedVersion": "0000000000000000"}},
                ]}, progress_callback=progressed)  # fmt: skip

            tg.start_soon(holding)
            for _ in range(6000):
                if HOLDING.is_set():
                    break
                await anyio.sleep(0.01)
            tg.start_soon(batch)
            with anyio.fail_after(60):
                await first_done.wait()  # the second step now waits for f.txt
            written = await other.call_tool("write_file", {"path": path, "content": "the other session's work"})
            assert not written.is_error, text_of(written)
            RELEASE.set()
    return text_of(outcome["batch"])


@pytest.mark.anyio
async def test_a_rollback_keeps_another_sessions_change_made_between_the_steps(tmp_path):
    root = tmp_path.resolve()
    (root / "a.txt").write_text("original")
    (root / "f.txt").write_text("f")
    first = {"tool": "write_file", "arguments": {"path": "a.txt", "content": "batch"}}
    text = await batch_failing_while_another_writes(root, first, "a.txt")
    assert text.startswith("EDIT_CONFLICT: Batch stopped at operation 2"), text
    assert (root / "a.txt").read_text() == "the other session's work"


@pytest.mark.anyio
async def test_a_rollback_keeps_what_another_session_put_in_a_directory_the_batch_made(tmp_path):
    """The batch made ``new/`` for its file; another session wrote ``new/theirs.txt`` before the
    batch failed. Clearing what the batch made would remove that file with the directory: the
    rollback takes back the batch's own file and the directory it made below, and keeps ``new/``."""
    root = tmp_path.resolve()
    (root / "f.txt").write_text("f")
    first = {"tool": "write_file", "arguments": {"path": "new/deep/mine.txt", "content": "batch"}}
    text = await batch_failing_while_another_writes(root, first, "new/theirs.txt")
    assert text.startswith("EDIT_CONFLICT: Batch stopped at operation 2"), text
    assert (root / "new" / "theirs.txt").read_text() == "the other session's work"
    assert not (root / "new" / "deep").exists(), "the batch's own file and the directory made for it stay"
    assert f"except at {root / 'new'}:" in text, text
    assert "every file is as it was before the batch" not in text, text


# A batch that moved a file away, another session having written a new file at the vacated name:
# the rollback keeps theirs, and must not destroy the moved file's content with it.
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
