"""Cancelling a long call stops the tool's work, not only the client's wait; progress arrives.

The walks are slowed down (a short sleep per entry) so that a call left alone would run for
many seconds; each test cancels it once its work is under way and checks that the work stopped
before its end. Waits are bounded generously and nothing is timed: a loaded machine is slow,
not wrong.
"""

import os
import time
from collections.abc import Callable

import anyio
import pytest

import fsmcp_edit.hooks
import fsmcp_read.hooks
import fsmcp_wordcount.hooks
from fsmcp.paths.fs import FileSystem
from fsmcp.testing import connect, host_for

ENTRIES = 4000
DELAY = 0.002  # seconds per entry: the whole walk would take ENTRIES * DELAY = 8 s
TIMEOUT = 60  # a bound for a loaded machine (tests in parallel): the waits end at the event, not the bound


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    top = tmp_path_factory.mktemp("cancel")
    for d in range(ENTRIES // 100):
        sub = top / "tree" / f"d{d:03}"
        sub.mkdir(parents=True)
        for f in range(99):
            (sub / f"f{f:02}.txt").write_text("x\n")
    with open(top / "sparse.bin", "wb") as fh:
        fh.truncate(1024**4)  # a tebibyte of holes: word_count would read for longer than any test runs
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


async def cancel_midway(host, client, tool, args, progress, under_way: Callable[[], bool]) -> None:
    """Call, cancel once ``under_way()`` says the work has begun, and wait until the host lets go."""
    scope = anyio.CancelScope()

    async def call():
        with scope:
            await client.call_tool(tool, args, progress_callback=progress)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        with anyio.fail_after(TIMEOUT):
            while not (host.runner.in_flight and under_way()):
                await anyio.sleep(0.01)
        scope.cancel()
    with anyio.fail_after(TIMEOUT):
        while host.runner.in_flight:
            await anyio.sleep(0.01)


async def settled(count: Callable[[], int]) -> int:
    """``count()`` once it has stopped growing: the cancelled work no longer runs."""
    with anyio.fail_after(TIMEOUT):
        before = count()
        while True:
            await anyio.sleep(0.5)
            if (now := count()) == before:
                return now
            before = now


@pytest.mark.anyio
@pytest.mark.parametrize(
    "tool, args",
    [
        ("directory_tree", {"path": "tree"}),
        ("edit_files", {"paths": ["tree/**/*.nomatch"], "edits": [{"oldText": "x", "newText": "y"}]}),
    ],
)
async def test_cancelled_walks_stop(tree, slow_walks, tool, args):
    host = host_for([tree], [("read", fsmcp_read.hooks), ("edit", fsmcp_edit.hooks)])
    seen = []

    async def progress(done, total, message):
        seen.append(done)

    async with connect(host, mode="legacy") as client:
        await cancel_midway(host, client, tool, args, progress, lambda: bool(seen))  # progress arrives
        # The server still answers.
        with anyio.fail_after(TIMEOUT):
            await client.list_tools()
        assert await settled(lambda: len(slow_walks)) < ENTRIES


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancelled_word_count_stops(tree, mode):
    host = host_for([tree], [("wordcount", fsmcp_wordcount.hooks)])
    seen = []

    async def progress(done, total, message):
        seen.append((done, total))

    async with connect(host, mode=mode) as client:
        await cancel_midway(host, client, "word_count", {"path": "sparse.bin"}, progress, lambda: bool(seen))
    assert seen[-1][1] == os.path.getsize(tree / "sparse.bin")
    assert seen[-1][0] < seen[-1][1]


@pytest.mark.anyio
async def test_a_cancelled_tree_copy_stops_and_leaves_nothing(tree, monkeypatch):
    import fsmcp.paths.dirfd
    import fsmcp_write.hooks

    copied = []
    real_copy_leaf = fsmcp.paths.dirfd._copy_leaf  # each file of the tree, one at a time

    def slow_copy_leaf(*args):
        time.sleep(DELAY)
        copied.append(args[1])
        return real_copy_leaf(*args)

    monkeypatch.setattr(fsmcp.paths.dirfd, "_copy_leaf", slow_copy_leaf)
    host = host_for([tree], [("write", fsmcp_write.hooks)])
    async with connect(host, mode="legacy") as client:
        await cancel_midway(host, client, "copy_file", {"source": "tree", "destination": "tree_copy"}, None, lambda: bool(copied))
        assert await settled(lambda: len(copied)) < ENTRIES
    # The copy appears whole or not at all: nothing of it is left, not even its staging directory.
    assert not (tree / "tree_copy").exists()
    assert not [p for p in os.listdir(tree) if "fsmcp-tmp" in p]
