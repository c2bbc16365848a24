"""Quick tools: run on the event loop while the roots are on local disks, in a worker otherwise,
and moved to a worker when their work turns out large."""

from __future__ import annotations

import subprocess
import threading
import time
import types as pytypes
from pathlib import Path

import pytest

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool, ToolInput, hookimpl
from fsmcp.paths.fs import QUICK_BYTES
from fsmcp.run.host import HostError
from fsmcp.paths.roots import RECHECK, LocalRoots, all_local, mount_table
from fsmcp.testing import connect, host_for, text_of

pytestmark = pytest.mark.anyio


class PathInput(ToolInput):
    path: str


def probe(seen: list[str]):
    """A quick tool that reads ``path`` and notes the thread of each attempt."""

    def read(args, ctx):
        seen.append(threading.current_thread().name)
        with ctx.fs.open_read(args.path) as fh:
            return f"{len(fh.read())} bytes"

    def listing(args, ctx):
        seen.append(threading.current_thread().name)
        return ", ".join(e.name for e in ctx.fs.list_dir(args.path))

    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("probe", "Read a file.", PathInput, read, READ_ONLY, quick=True))
        register(Tool("probe_dir", "List a directory.", PathInput, listing, READ_ONLY, quick=True))

    module.fsmcp_register_tools = fsmcp_register_tools
    return module


async def call(host, name: str, path: Path) -> str:
    async with connect(host) as client:
        result = await client.call_tool(name, {"path": str(path)})
    assert not result.is_error, text_of(result)
    return text_of(result)


async def test_a_small_read_runs_on_the_event_loop(root):
    seen: list[str] = []
    host = host_for([root], [("probe", probe(seen))])
    assert await call(host, "probe", root / "a.txt") == "6 bytes"
    assert seen == [threading.current_thread().name]  # the test's own thread runs the loop


async def test_a_large_read_starts_on_the_loop_and_is_run_again_in_a_worker(root):
    seen: list[str] = []
    (root / "big.txt").write_bytes(b"x" * (QUICK_BYTES + 1))
    host = host_for([root], [("probe", probe(seen))])
    assert await call(host, "probe", root / "big.txt") == f"{QUICK_BYTES + 1} bytes"
    assert seen[0] == threading.current_thread().name and seen[1].startswith("fsmcp-worker-") and len(seen) == 2


async def test_a_listing_moves_to_a_worker_before_it_reads_the_directory(root):
    seen: list[str] = []
    host = host_for([root], [("probe", probe(seen))])
    assert await call(host, "probe_dir", root) == "a.txt"
    assert seen[0] == threading.current_thread().name and seen[1].startswith("fsmcp-worker-") and len(seen) == 2


async def test_a_root_holding_a_mount_of_another_kind_keeps_every_call_in_a_worker(root):
    # procfs stands for any file system whose calls can block (a network share, FUSE).
    (root / "mnt").mkdir()
    subprocess.run(["mount", "-t", "proc", "proc", str(root / "mnt")], check=True)
    try:
        seen: list[str] = []
        host = host_for([root], [("probe", probe(seen))])
        assert await call(host, "probe", root / "a.txt") == "6 bytes"
        assert seen[0].startswith("fsmcp-worker-") and len(seen) == 1
    finally:
        subprocess.run(["umount", str(root / "mnt")], check=True)
    time.sleep(RECHECK)
    seen.clear()
    assert await call(host, "probe", root / "a.txt") == "6 bytes"  # the table is read again
    assert seen == [threading.current_thread().name]


def test_a_mount_made_or_removed_after_start_is_seen_once_the_recheck_interval_has_passed(tmp_path):
    (tmp_path / "mnt").mkdir()
    local = LocalRoots([tmp_path])
    assert local()
    subprocess.run(["mount", "-t", "proc", "proc", str(tmp_path / "mnt")], check=True)
    try:
        time.sleep(RECHECK)
        assert not local()
        time.sleep(RECHECK)
        assert not local()  # the change is reported once; the answer stays
    finally:
        subprocess.run(["umount", str(tmp_path / "mnt")], check=True)
    time.sleep(RECHECK)
    assert local()


MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:5 / /proc rw - proc proc rw
40 22 0:40 / /srv/data rw - nfs4 server:/export rw
41 22 8:2 / /home/a\\040b rw - xfs /dev/sda2 rw
42 41 0:50 / /home/a\\040b/fuse rw - fuse.sshfs host: rw
"""


@pytest.mark.parametrize(
    ("roots", "local"),
    [
        (["/home/user"], True),  # on /, ext4
        (["/srv/data"], False),  # the root is an NFS mount
        (["/srv/data/project"], False),  # inside one
        (["/srv"], False),  # holds one
        (["/home/a b/code"], True),  # xfs, the mount point's space escaped as \040
        (["/home/a b"], False),  # holds a FUSE mount
        (["/"], False),  # holds /proc, whose files can block
        (["/home/user", "/srv/data"], False),  # every root must be local
    ],
)
def test_the_mount_table_decides_which_roots_are_local(roots, local):
    assert all_local([Path(r) for r in roots], mount_table(MOUNTINFO)) is local


def test_an_unreadable_mount_table_means_nothing_is_local(tmp_path):
    assert LocalRoots([tmp_path], mountinfo=str(tmp_path / "no-such-file"))() is False


async def test_an_async_tool_marked_quick_is_awaited_and_one_that_cannot_be_imported_fails_as_a_result(root):
    async def greet(args, ctx):
        return f"hello {args.path}"

    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("greet", "Greet.", PathInput, greet, READ_ONLY, quick=True))
        register(Tool("broken", "Import.", PathInput, "fsmcp_no_such_module:run", READ_ONLY, quick=True))

    module.fsmcp_register_tools = fsmcp_register_tools
    host = host_for([root], [("odd", module)])
    assert await call(host, "greet", root) == f"hello {root}"
    async with connect(host) as client:
        result = await client.call_tool("broken", {"path": str(root)})
    assert result.is_error and text_of(result).startswith("INTERNAL_ERROR: broken failed unexpectedly (ModuleNotFoundError")


def test_only_a_read_only_tool_may_be_quick(root):
    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("scribble", "Write.", PathInput, lambda args, ctx: "x", DESTRUCTIVE, quick=True))

    module.fsmcp_register_tools = fsmcp_register_tools
    with pytest.raises(HostError, match="registered tool 'scribble' as quick, which only a read-only tool may be"):
        host_for([root], [("scribble", module)])


def test_the_mount_table_s_descriptor_goes_with_its_watcher():
    import gc
    import os

    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        LocalRoots([Path("/tmp")])
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= before
