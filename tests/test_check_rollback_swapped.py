"""A failed call's rollback never changes anything outside the roots, and what it cannot put back
stays recorded so that it can be undone (list_changes shows the change): the directory the call wrote in is swapped for a link to a directory outside
the roots (or renamed away) while the call runs, before the call fails and rolls back.

Ordered without timing: the test's ``fsmcp_before_change`` does the swap itself when the call
reaches its second file, then refuses that file (the hook's documented way to refuse a change), so
the call fails and rolls back after the swap.
"""

from __future__ import annotations

import os
from pathlib import Path

import fsmcp_batch.hooks
import fsmcp_history.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.testing import connect, host_for, text_of


class SwapsAtSecond:
    """At the change of ``second.txt``: ``swap()``, then refuse it (unless ``refuse`` is False)."""

    def __init__(self, swap, refuse=True):
        self.swap = swap
        self.refuse = refuse
        self.swapped = False

    @hookimpl
    def fsmcp_before_change(self, change, paths, fs, settings):
        if any(p.path.name == "second.txt" for p in paths) and not self.swapped:
            self.swap()
            self.swapped = True
            if self.refuse:
                raise ToolError(ErrorCode.ACCESS_DENIED, "refused by the test, to make the call fail")


def _to_link(directory: Path, target: Path) -> None:
    """``directory`` moved aside to ``<directory>.aside``, a link to ``target`` at its name."""
    os.rename(directory, directory.with_name(directory.name + ".aside"))
    os.symlink(target, directory)


def _tree(top: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(top))
            out[rel] = f"-> {os.readlink(p)}" if p.is_symlink() else (p.read_bytes() if p.is_file() else "dir")
    return out


def _places(tmp_path: Path) -> tuple[Path, Path]:
    root = (tmp_path / "root").resolve()
    outside = (tmp_path / "outside").resolve()
    root.mkdir()
    outside.mkdir()
    (outside / "a.txt").write_text("outside's own a.txt\n")
    return root, outside


async def _run(root: Path, hook: SwapsAtSecond, tool: str, arguments: dict, tmp_path: Path):
    host = host_for([root], [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("history", fsmcp_history.hooks), ("swaps", hook)], journal=str(tmp_path / "journal"))
    async with connect(host) as client:
        result = await client.call_tool(tool, arguments)
        changes = text_of(await client.call_tool("list_changes", {}))
    print("list_changes:", changes)
    return result, changes


def _journal_holds(tmp_path: Path, content: bytes) -> bool:
    """Whether the journal's directory holds a copy of ``content`` anywhere (pending/ included)."""
    return any(content in v for v in _tree(tmp_path / "journal").values() if isinstance(v, bytes))


def _kept(root: Path, tmp_path: Path, changes: str, content: bytes) -> bool:
    """Whether ``content`` is still in the root, or the change is in list_changes (so undo_change can bring it back)."""
    in_root = content in [v for v in _tree(root).values() if isinstance(v, bytes)]
    return in_root or (changes != "No changes in the journal." and _journal_holds(tmp_path, content))


WRITE_FILES_OVER = {"files": [{"path": "d/a.txt", "content": "the call's a.txt\n"}, {"path": "second.txt", "content": "second\n"}]}
WRITE_FILES_NEW = {"files": [{"path": "new/a.txt", "content": "the call's a.txt\n"}, {"path": "second.txt", "content": "second\n"}]}
BATCH_DELETE = {"transactional": True, "operations": [
    {"tool": "delete_file", "arguments": {"path": "d/a.txt"}},
    {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
]}  # fmt: skip
BATCH_MOVE_OVER = {"transactional": True, "operations": [
    {"tool": "move_file", "arguments": {"source": "src.txt", "destination": "d/a.txt", "overwrite": True}},
    {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
]}  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "swapped"),
    [
        ("write_files", WRITE_FILES_OVER, "d"),
        ("write_files", WRITE_FILES_NEW, "new"),
        ("batch_operations", BATCH_DELETE, "d"),
        ("batch_operations", BATCH_MOVE_OVER, "d"),
    ],
    ids=["write_files-overwrite", "write_files-made-dir", "batch-delete", "batch-move-over"],
)
async def test_a_rollback_after_a_directory_was_swapped_for_a_link_outside_changes_nothing_outside(tmp_path, tool, arguments, swapped):
    root, outside = _places(tmp_path)
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("the original a.txt\n")
    (root / "src.txt").write_text("the moved source\n")
    hook = SwapsAtSecond(lambda: _to_link(root / swapped, outside))
    before_outside = _tree(outside)
    result, changes = await _run(root, hook, tool, arguments, tmp_path)
    print(tool, "->", text_of(result))
    print("outside after:", _tree(outside))
    print("root after:", _tree(root))
    assert hook.swapped, "the call never reached second.txt"
    assert result.is_error, text_of(result)
    assert _tree(outside) == before_outside, "the rollback changed a directory outside the roots through a link swapped in"
    print("the journal's directory holds the original (pending/ included):", _journal_holds(tmp_path, b"the original a.txt\n"))
    assert _kept(root, tmp_path, changes, b"the original a.txt\n"), (
        "the original a.txt is neither in the root nor in a change list_changes shows: not put back, not undoable"
    )
    if arguments is BATCH_MOVE_OVER:
        assert _kept(root, tmp_path, changes, b"the moved source\n"), "the batch's moved source is gone"


@pytest.mark.anyio
async def test_a_rollback_after_the_parent_was_renamed_keeps_the_original_content(tmp_path):
    root, _ = _places(tmp_path)
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("the original a.txt\n")
    hook = SwapsAtSecond(lambda: os.rename(root / "d", root / "e"))
    result, changes = await _run(root, hook, "write_files", WRITE_FILES_OVER, tmp_path)
    print("write_files ->", text_of(result))
    print("root after:", _tree(root))
    assert result.is_error
    print("the journal's directory holds the original (pending/ included):", _journal_holds(tmp_path, b"the original a.txt\n"))
    assert _kept(root, tmp_path, changes, b"the original a.txt\n"), (
        "the original a.txt is neither in the root nor in a change list_changes shows: not put back, not undoable"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["write_files", "batch_operations"])
async def test_without_a_journal_a_rollback_after_the_parent_was_renamed_keeps_the_original_content(tmp_path, monkeypatch, tool):
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root, _ = _places(tmp_path)
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("the original a.txt\n")
    hook = SwapsAtSecond(lambda: os.rename(root / "d", root / "e"))
    arguments = WRITE_FILES_OVER if tool == "write_files" else {"transactional": True, "operations": [
        {"tool": "write_file", "arguments": {"path": "d/a.txt", "content": "the call's a.txt\n"}},
        {"tool": "write_file", "arguments": {"path": "second.txt", "content": "second\n"}},
    ]}  # fmt: skip
    host = host_for([root], [("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks), ("swaps", hook)], journal="off")
    async with connect(host) as client:
        result = await client.call_tool(tool, arguments)
    text = text_of(result)
    everywhere = _tree(tmp_path)
    holding = [k for k, v in everywhere.items() if v == b"the original a.txt\n"]
    print(tool, "->", text)
    print("root after:", _tree(root))
    print("files holding the original:", holding)
    assert result.is_error
    in_root = any(k.startswith("root/") for k in holding)
    named = any(str(tmp_path / k) in text for k in holding)
    assert in_root or named, "the original a.txt is not in the root, and the answer names no place that keeps it"


def _file_to_link(path: Path, target: Path) -> None:
    """The file at ``path`` moved aside to ``<name>.aside``, a link to ``target`` at its name."""
    os.rename(path, path.with_name(path.name + ".aside"))
    os.symlink(target, path)


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments"), [("write_files", WRITE_FILES_OVER), ("batch_operations", BATCH_DELETE)], ids=["write_files", "batch-delete"])
async def test_a_rollback_after_the_file_was_swapped_for_a_link_outside_writes_nothing_outside(tmp_path, tool, arguments):
    root, outside = _places(tmp_path)
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("the original a.txt\n")

    def swap() -> None:
        if (root / "d" / "a.txt").exists() or (root / "d" / "a.txt").is_symlink():
            _file_to_link(root / "d" / "a.txt", outside / "a.txt")
        else:  # deleted by the batch: a link where it was
            os.symlink(outside / "a.txt", root / "d" / "a.txt")

    hook = SwapsAtSecond(swap)
    before_outside = _tree(outside)
    result, changes = await _run(root, hook, tool, arguments, tmp_path)
    print(tool, "->", text_of(result))
    print("outside after:", _tree(outside))
    print("root after:", _tree(root))
    assert hook.swapped
    assert result.is_error
    assert _tree(outside) == before_outside, "the rollback wrote outside the roots through a link swapped in for the file"


@pytest.mark.anyio
async def test_a_change_whose_directory_was_swapped_for_a_link_is_journaled_and_undone_once_mended(tmp_path):
    # The call succeeds: the journal cannot read d/a.txt after it (a link out of the roots on the
    # way), so it keeps the change with its copy, says so, and an undo takes it back once d is back.
    root, outside = _places(tmp_path)
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("the original a.txt\n")
    hook = SwapsAtSecond(lambda: _to_link(root / "d", outside), refuse=False)
    host = host_for([root], [("write", fsmcp_write.hooks), ("history", fsmcp_history.hooks), ("swaps", hook)], journal=str(tmp_path / "journal"))
    async with connect(host) as client:
        result = await client.call_tool("write_files", WRITE_FILES_OVER)
        changes = text_of(await client.call_tool("list_changes", {}))
        linked = await client.call_tool("undo_change", {"id": 1, "force": True})
        (root / "d").unlink()
        (root / "d.aside").rename(root / "d")
        unforced = await client.call_tool("undo_change", {"id": 1})
        forced = await client.call_tool("undo_change", {"id": 1, "force": True})
    for name, answer in [("write_files", result), ("while linked", linked), ("unforced", unforced), ("forced", forced)]:
        print(name, "->", answer.is_error, text_of(answer))
    assert not result.is_error, text_of(result)
    assert text_of(result).endswith(
        f"The journal could not read {root / 'd' / 'a.txt'} after this change (a symbolic link on the way now leads outside "
        "the allowed directories, or a directory on the way cannot be read): once that is mended, undo_change 1 with "
        "force: true puts back what it held before."
    ), text_of(result)
    assert changes.startswith("1  ") and "write_files" in changes, changes
    assert linked.is_error and text_of(linked).startswith("ACCESS_DENIED"), text_of(linked)
    assert unforced.is_error and text_of(unforced).startswith("EDIT_CONFLICT"), text_of(unforced)
    assert not forced.is_error, text_of(forced)
    assert (root / "d" / "a.txt").read_text() == "the original a.txt\n"
    assert not (root / "second.txt").exists()
    assert (outside / "a.txt").read_text() == "outside's own a.txt\n"
