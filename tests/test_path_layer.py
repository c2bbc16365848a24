"""The path layer: a policy object handed down, and each call's file access bound to its call.

That the path layer imports nothing above it (the host, the call runner, the context) is
test_architecture's check of the host's packages.
"""

import gc
import weakref
from pathlib import Path

import pytest

from fsmcp import Access, Change, ToolContext, ToolError
from fsmcp.testing import host_for


def test_the_policy_answers_without_the_host(tmp_path: Path):
    (tmp_path / ".env").write_text("SECRET=1\n")
    host = host_for([tmp_path], entry_points=True)
    policy = host.fs.policy
    assert policy is host.path_policy
    assert policy.resolve("a.txt", Access.READ).path == tmp_path.resolve() / "a.txt"
    with pytest.raises(ToolError, match="ACCESS_DENIED"):
        policy.resolve("/etc/passwd", Access.READ)
    with pytest.raises(ToolError, match="ACCESS_DENIED"):
        policy.resolve(".env", Access.READ)  # the secrets policy's veto
    assert policy.is_protected(tmp_path.resolve() / ".env") and not policy.is_protected(tmp_path.resolve() / "a.txt")


def test_a_calls_file_system_announces_to_its_change_and_the_hosts_to_none(tmp_path: Path):
    host = host_for([tmp_path], entry_points=True)
    heard: list[tuple[list[str], object]] = []
    change = Change("write_file", "s", lambda c, paths, call: heard.append(([p.path.name for p in paths], call)), lambda p: False)
    ctx = ToolContext(fs=host.fs, settings=host.settings, tool=host.tools["write_file"], change=change)
    assert ctx.fs.call == ctx and ctx.fs is not host.fs
    ctx.fs.write_atomic("mine.txt", b"a\n")
    host.fs.write_atomic("other.txt", b"b\n")
    assert heard == [(["mine.txt"], ctx)]
    assert heard[0][1].fs.call == ctx  # what the change hooks get as fs: the announcing call's
    assert (tmp_path / "mine.txt").read_text() == "a\n" and (tmp_path / "other.txt").read_text() == "b\n"


def test_a_cancelled_calls_copy_stops_and_leaves_nothing(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(5):
        (tree / f"f{i}.txt").write_text("x" * 10)
    host = host_for([tmp_path], entry_points=True)
    ctx = ToolContext(fs=host.fs, settings=host.settings, tool=host.tools["copy_file"])
    ctx.cancel()
    with pytest.raises(ToolError, match="copy_file was cancelled by the client"):
        ctx.fs.copy("tree", "copy")
    assert not (tmp_path / "copy").exists()
    host.fs.copy("tree", "copy")  # the host's own file system serves no call: nothing cancels it
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == [f"f{i}.txt" for i in range(5)]


def test_a_calls_context_is_freed_without_the_garbage_collector(tmp_path: Path):
    # ctx.fs refers to its call and ctx to its file system: a cycle would leave every call's
    # context to the collector, whose passes over the heap slow every warm call.
    host = host_for([tmp_path], entry_points=True)
    ctx = ToolContext(fs=host.fs, settings=host.settings, tool=host.tools["write_file"])
    ctx.fs.write_atomic("a.txt", b"a\n")
    gone = weakref.ref(ctx)
    gc.disable()
    try:
        del ctx
        assert gone() is None
    finally:
        gc.enable()
