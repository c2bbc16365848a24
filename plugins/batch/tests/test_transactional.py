"""transactional: true — a failed batch leaves the tree byte for byte as it was."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import fsmcp_batch.hooks
import fsmcp_edit.hooks
import fsmcp_patch.hooks
import pytest
from fsmcp import DESTRUCTIVE, OVERWRITES, READ_ONLY, Tool, ToolInput, hookimpl
from fsmcp.testing import host_for
from fsmcp_batch.models import OPERATION_TYPES

EDIT_AND_PATCH = [("edit", fsmcp_edit.hooks), ("patch", fsmcp_patch.hooks)]


def build(root: Path) -> None:
    (root / "a.txt").write_bytes(b"old a\r\n")
    (root / "a.txt").chmod(0o604)
    (root / "keep").mkdir()
    (root / "keep" / "b.txt").write_bytes(b"bee\n")
    (root / "keep" / "b.txt").chmod(0o640)
    (root / "old").mkdir()
    (root / "old" / "secret.txt").write_bytes(b"\x00\xffsecret")
    (root / "old" / "secret.txt").chmod(0o600)
    (root / "old" / "link").symlink_to("../a.txt")
    (root / "old" / "sub").mkdir()
    (root / "old" / "sub").chmod(0o750)
    (root / "taken.txt").write_bytes(b"taken")
    (root / "alias").symlink_to("a.txt")


FAILS = {"tool": "copy_file", "arguments": {"source": "a.txt", "destination": "taken.txt"}}
"""taken.txt exists and overwrite is not set: ALREADY_EXISTS."""
LATER = {"type": "append", "params": {"path": "a.txt", "content": "never"}}

BATCHES = {
    "write-move-delete": [
        {"tool": "write_file", "arguments": {"path": "a.txt", "content": "new a"}},
        {"tool": "move_file", "arguments": {"source": "keep/b.txt", "destination": "fresh/deep/b.txt"}},
        {"tool": "delete_file", "arguments": {"path": "old", "recursive": True}},
        FAILS,
        LATER,
    ],
    "create-append-link": [
        {"tool": "write_file", "arguments": {"path": "new/dir/c.txt", "content": "c"}},
        {"tool": "append_file", "arguments": {"path": "keep/b.txt", "content": "more"}},
        {"tool": "delete_file", "arguments": {"path": "alias"}},
        FAILS,
        LATER,
    ],
    "through-a-link-and-copies": [
        {"tool": "write_file", "arguments": {"path": "alias", "content": "written through the link"}},
        {"tool": "copy_file", "arguments": {"source": "old", "destination": "keep", "overwrite": True}},
        {"type": "move", "params": {"from": "taken.txt", "to": "keep/taken.txt"}},
        {"tool": "copy_file", "arguments": {"source": "a.txt", "destination": "keep/secret.txt"}},  # there since step 2
        LATER,
    ],
    "directories": [
        {"tool": "create_directory", "arguments": {"path": "made/a/b"}},
        {"tool": "create_directory", "arguments": {"path": "keep"}},
        {"tool": "write_file", "arguments": {"path": "keep/new.txt", "content": "n"}},
        FAILS,
        LATER,
    ],
    "operation-types": [
        {"type": "write", "params": {"file": "a.txt", "content": base64.b64encode(b"\x01\x02").decode(), "encoding": "base64"}},
        {"type": "copy", "params": {"source": "old", "destination": "copied"}},
        {"type": "delete", "params": {"path": "keep/b.txt"}},
        {"type": "delete", "params": {"path": "nothing-here.txt"}},
        LATER,
    ],
}


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(BATCHES))
async def test_a_batch_failing_at_its_fourth_step_leaves_the_tree_as_it_was(server, root, tree_of, name):
    build(root)
    before = tree_of(root)
    async with server() as s:
        is_error, text = await s.batch(BATCHES[name], transactional=True)
    assert is_error, text  # nothing was done: the call failed, and says which operation did
    assert text.startswith(text.split("[4] ")[1].split(" ERROR ")[1].split(":")[0] + ": Batch stopped at operation 4")
    for n, op in enumerate(BATCHES[name][:3], 1):
        assert f"[{n}] {op.get('tool') or OPERATION_TYPES[op['type']]} OK" in text
    assert "[4] " in text and " ERROR " in text.split("[4] ")[1].split("\n")[0]
    assert "[5] append_file SKIPPED (not run: operation 4 failed)" in text
    assert "Batch stopped at operation 4" in text
    assert "Rolled back: the changes of operations 1-3 were undone; every file is as it was before the batch." in text
    assert tree_of(root) == before


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(BATCHES))
async def test_without_transactional_the_same_batch_leaves_its_changes(server, root, tree_of, name):
    build(root)
    before = tree_of(root)
    async with server() as s:
        text = await s.ok(BATCHES[name])
    assert "Not rolled back (transactional is off): the changes of operations 1-3 stay." in text
    assert tree_of(root) != before


@pytest.mark.anyio
async def test_a_successful_transactional_batch_keeps_its_changes(server, root):
    build(root)
    async with server() as s:
        text = await s.ok(BATCHES["write-move-delete"][:3], transactional=True)
    assert text.endswith("Batch done: 3 operations, 3 ok, 0 failed, 0 skipped.")
    assert (root / "a.txt").read_bytes() == b"new a"
    assert (root / "fresh" / "deep" / "b.txt").read_bytes() == b"bee\n"
    assert not (root / "old").exists()


@pytest.mark.anyio
async def test_a_failure_with_continue_on_error_does_not_roll_back(server, root):
    build(root)
    ops = [
        {"tool": "write_file", "arguments": {"path": "a.txt", "content": "new a"}},
        {**FAILS, "continueOnError": True},
        {"tool": "write_file", "arguments": {"path": "z.txt", "content": "z"}},
    ]
    async with server() as s:
        text = await s.ok(ops, transactional=True)
    assert "[2] copy_file ERROR ALREADY_EXISTS: " in text
    assert text.endswith("Batch done: 3 operations, 2 ok, 1 failed, 0 skipped.")
    assert (root / "a.txt").read_bytes() == b"new a"
    assert (root / "z.txt").read_bytes() == b"z"


@pytest.mark.anyio
async def test_a_step_whose_paths_cannot_be_saved_fails_and_the_batch_rolls_back(server, root, tmp_path, tree_of):
    build(root)
    locked = tmp_path / "locked"
    locked.mkdir()
    before = tree_of(root)
    async with server(roots=[root, f"{locked}:ro"]) as s:
        text = await s.fail(
            "READ_ONLY",
            [
                {"tool": "write_file", "arguments": {"path": "a.txt", "content": "new a"}},
                {"tool": "write_file", "arguments": {"path": str(locked / "x.txt"), "content": "x"}},
            ],
            transactional=True,
        )
    assert "[2] write_file ERROR READ_ONLY: " in text
    assert "Rolled back: the changes of operation 1 were undone" in text
    assert tree_of(root) == before
    assert list(locked.iterdir()) == []


@pytest.mark.anyio
async def test_edit_files_globs_are_expanded_by_its_own_dry_run_and_rolled_back(server, root, tree_of):
    (root / "src").mkdir()
    for name in ("one.py", "two.py", "three.txt"):
        (root / "src" / name).write_bytes(b"x = 1\r\n")
    before = tree_of(root)
    ops = [
        {"tool": "edit_files", "arguments": {"paths": ["src/*.py"], "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}},
        {"tool": "read_file", "arguments": {"path": "src/one.py"}},
        FAILS | {"arguments": {"source": "src/one.py", "destination": "src/two.py"}},
    ]
    async with server(EDIT_AND_PATCH) as s:
        text = await s.fail("ALREADY_EXISTS", ops, transactional=True)
    assert "[1] edit_files OK" in text and "x = 2" in text.split("[3]")[0]
    assert "Rolled back: the changes of operation 1 were undone" in text
    assert tree_of(root) == before


@pytest.mark.anyio
async def test_patch_apply_creations_deletions_and_renames_are_rolled_back(server, root, tree_of):
    (root / "keep.txt").write_text("one\ntwo\n")
    (root / "gone.txt").write_text("bye\n")
    (root / "from.txt").write_text("moving\n")
    before = tree_of(root)
    patch = (
        "--- a/keep.txt\n+++ b/keep.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
        "--- /dev/null\n+++ b/made/new.txt\n@@ -0,0 +1 @@\n+new\n"
        "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/from.txt b/to.txt\nsimilarity index 100%\nrename from from.txt\nrename to to.txt\n"
    )
    ops = [{"tool": "patch_apply", "arguments": {"patch": patch}}, {"type": "delete", "params": {"path": "missing"}}]
    async with server(EDIT_AND_PATCH) as s:
        text = await s.fail("NOT_FOUND", ops, transactional=True)
        assert "[1] patch_apply OK" in text, text
        assert "Rolled back: the changes of operation 1 were undone" in text
        assert tree_of(root) == before
        await s.ok(ops[:1])
    assert tree_of(root) != before  # the same patch, outside a failing batch, does change all four


@pytest.mark.anyio
async def test_a_dry_run_that_fails_fails_the_step_without_running_it(server, root):
    (root / "f.txt").write_text("abc\n")
    ops = [{"tool": "edit_files", "arguments": {"paths": ["f.txt"], "edits": [{"oldText": "zzz", "newText": "y"}], "atomic": True}}]
    async with server(EDIT_AND_PATCH) as s:
        text = await s.fail("PATTERN_NOT_FOUND", ops, transactional=True)
    assert "[1] edit_files ERROR PATTERN_NOT_FOUND: " in text
    assert (root / "f.txt").read_text() == "abc\n"


class Unknowable:
    """A tool that may change any file: a transactional batch cannot save what it touches."""

    class Args(ToolInput):
        what: str = "x"

    @hookimpl
    def fsmcp_register_tools(self, register):
        register(Tool("scribble", "changes something", self.Args, lambda args, ctx: "scribbled", DESTRUCTIVE))


@pytest.mark.anyio
async def test_a_tool_whose_changes_cannot_be_named_is_refused_before_anything_runs(server, root):
    ops = [
        {"tool": "write_file", "arguments": {"path": "a.txt", "content": "a"}},
        {"tool": "scribble", "arguments": {}},
    ]
    async with server([("unknowable", Unknowable())]) as s:
        text = await s.fail("INVALID_PARAMS", ops, transactional=True)
        assert "operation 2 (scribble): a transactional batch cannot tell in advance which files scribble changes" in text
        assert not (root / "a.txt").exists()
        assert "[2] scribble OK\nscribbled" in await s.ok(ops)


class Trip:
    """A read-only tool that cancels the scope the batch runs in, the way a client's cancel would."""

    scope: anyio.CancelScope | None = None

    @hookimpl
    def fsmcp_register_tools(self, register):
        async def trip(args, ctx):
            self.scope.cancel()
            return "tripped"

        register(Tool("trip", "cancels", ToolInput, trip, READ_ONLY))


@pytest.mark.anyio
@pytest.mark.parametrize("transactional", [True, False])
async def test_a_cancelled_batch_stops_between_steps_and_rolls_back_first(server, root, tree_of, transactional):
    build(root)
    before = tree_of(root)
    trip = Trip()
    ops = [
        {"tool": "write_file", "arguments": {"path": "a.txt", "content": "new a"}},
        {"tool": "trip", "arguments": {}},
        {"tool": "write_file", "arguments": {"path": "after.txt", "content": "should not be written"}},
    ]
    async with server([("trip", trip)]) as s:
        with anyio.CancelScope() as trip.scope:
            await s.host.runner.run("batch_operations", {"operations": ops, "transactional": transactional})
        assert trip.scope.cancelled_caught
    assert not (root / "after.txt").exists()
    if transactional:
        assert tree_of(root) == before
    else:
        assert (root / "a.txt").read_bytes() == b"new a"


class CancelledMidWrite:
    """A write_file that is cancelled half-way: the cancellation arrives while it still has work to do."""

    scope: anyio.CancelScope | None = None
    finished = 0

    class Args(ToolInput):
        path: str
        content: str

    @hookimpl
    def fsmcp_register_tools(self, register):
        async def write_file(args, ctx):
            self.scope.cancel()
            await anyio.sleep(0)  # where an unshielded step would be cancelled, half done
            ctx.fs.write_atomic(args.path, args.content.encode())
            self.finished += 1
            return "written"

        register(Tool("write_file", "writes after a cancellation", self.Args, write_file, OVERWRITES))


@pytest.mark.anyio
async def test_a_changing_step_finishes_before_a_cancellation_lands_and_is_then_undone(root, tree_of):
    build(root)
    before = tree_of(root)
    plugin = CancelledMidWrite()
    host = host_for([root], [("batch", fsmcp_batch.hooks), ("mid", plugin)])
    ops = [{"tool": "write_file", "arguments": {"path": p, "content": "new"}} for p in ("a.txt", "b.txt")]
    with anyio.CancelScope() as plugin.scope:
        await host.runner.run("batch_operations", {"operations": ops, "transactional": True})
    assert plugin.scope.cancelled_caught
    assert plugin.finished == 1
    assert tree_of(root) == before
