"""Cancelling a long call stops the tool's work, not only the client's wait; progress arrives.

The walks are slowed down (a short sleep per entry) so that a call left alone would run for
many seconds; each test cancels it early and checks that the tool stopped well before that.
"""

import os
import time

import anyio
import pytest

import fsmcp_edit.hooks
import fsmcp_read.hooks
import fsmcp_wordcount.hooks
from fsmcp.fs import FileSystem
from fsmcp.testing import connect, host_for

ENTRIES = 4000
DELAY = 0.002  # seconds per entry: the whole walk would take ENTRIES * DELAY = 8 s


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    top = tmp_path_factory.mktemp("cancel")
    for d in range(ENTRIES // 100):
        sub = top / "tree" / f"d{d:03}"
        sub.mkdir(parents=True)
        for f in range(99):
            (sub / f"f{f:02}.txt").write_text("x\n")
    with open(top / "sparse.bin", "wb") as fh:
        fh.truncate(8 * 1024**3)  # 8 GiB of holes: word_count would read for a long time
    return top


@pytest.fixture
def slow_walks(monkeypatch):
    walked = []
    real_walk = FileSystem.walk

    def walk(self, *args, **kwargs):
        for item in real_walk(self, *args, **kwargs):
            time.sleep(DELAY)
            walked.append(item)
            yield item

    monkeypatch.setattr(FileSystem, "walk", walk)
    return walked


async def cancel_midway(host, client, tool, args, progress):
    scope = anyio.CancelScope()

    async def call():
        with scope:
            await client.call_tool(tool, args, progress_callback=progress)

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        with anyio.fail_after(10):
            while not host.in_flight:
                await anyio.sleep(0.01)
        await anyio.sleep(2.5)
        scope.cancel()
    with anyio.fail_after(3):
        while host.in_flight:
            await anyio.sleep(0.01)
    return time.monotonic() - started


@pytest.mark.anyio
@pytest.mark.parametrize(
    "tool, args",
    [
        ("directory_tree", {"path": "tree"}),
        ("list_directory", {"path": "tree", "recursive": True}),
        ("edit_files", {"paths": ["tree/**/*.nomatch"], "edits": [{"oldText": "x", "newText": "y"}]}),
    ],
)
async def test_cancelled_walks_stop(tree, slow_walks, tool, args):
    host = host_for([tree], [("read", fsmcp_read.hooks), ("edit", fsmcp_edit.hooks)])
    seen = []

    async def progress(done, total, message):
        seen.append(done)

    async with connect(host, mode="legacy") as client:
        elapsed = await cancel_midway(host, client, tool, args, progress)
        # The server still answers at once.
        with anyio.fail_after(2):
            await client.list_tools()
    assert elapsed < ENTRIES * DELAY - 2
    assert len(slow_walks) < ENTRIES
    assert seen, "no progress notification arrived before the cancellation"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancelled_word_count_stops(tree, mode):
    host = host_for([tree], [("wordcount", fsmcp_wordcount.hooks)])
    seen = []

    async def progress(done, total, message):
        seen.append((done, total))

    async with connect(host, mode=mode) as client:
        elapsed = await cancel_midway(host, client, "word_count", {"path": "sparse.bin"}, progress)
    assert seen and seen[-1][1] == os.path.getsize(tree / "sparse.bin")
    assert seen[-1][0] < seen[-1][1]
    assert elapsed < 10


@pytest.mark.anyio
async def test_a_cancelled_tree_copy_stops_and_leaves_nothing(tree, monkeypatch):
    import fsmcp.dirfd
    import fsmcp_write.hooks

    copied = []
    real_copy_node = fsmcp.dirfd.copy_node

    def slow_copy_node(*args):
        time.sleep(DELAY)
        copied.append(args[1])
        return real_copy_node(*args)

    monkeypatch.setattr(fsmcp.dirfd, "copy_node", slow_copy_node)
    host = host_for([tree], [("write", fsmcp_write.hooks)])
    async with connect(host, mode="legacy") as client:
        elapsed = await cancel_midway(host, client, "copy_file", {"source": "tree", "destination": "tree_copy"}, None)
    assert elapsed < ENTRIES * DELAY - 2
    assert len(copied) < ENTRIES
    # The copy appears whole or not at all: nothing of it is left, not even its staging directory.
    assert not (tree / "tree_copy").exists()
    assert not [p for p in os.listdir(tree) if "fsmcp-tmp" in p]
