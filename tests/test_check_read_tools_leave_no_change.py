"""The built-in read tools (each listed with ``readOnlyHint``) leave no change in the journal:
``list_changes`` after a call of each says there is none."""

from __future__ import annotations

import zipfile

import pytest

from fsmcp.testing import connect, host_for, text_of

def _stats(root):
    """Every entry below ``root`` with its kind, size, mode and modification time (a directory's
    changes when an entry was made in it, even one removed since)."""
    import os

    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [".", *dirnames, *filenames]:
            st = os.lstat(os.path.join(dirpath, name))
            out[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    return out


READ_CALLS = [
    ("read_file", {"path": "f.txt"}),
    ("read_multiple_files", {"paths": ["f.txt", "d/g.py"]}),
    ("list_directory", {"path": "."}),
    ("directory_tree", {"path": "."}),
    ("get_file_info", {"path": "f.txt"}),
    ("list_allowed_directories", {}),
    ("search_files", {"path": ".", "pattern": "*.py"}),
    ("grep_files", {"path": ".", "pattern": "def"}),
    ("outline", {"path": "d/g.py"}),
    ("list_archive", {"archive": "a.zip"}),
    ("glob_search", {"directory": ".", "globs": ["**/*.py"]}),
    ("read_symbol", {"path": "d/g.py", "name": "g"}),
    ("read_notebook", {"path": "n.ipynb"}),
    ("watch_file", {"path": "f.txt", "waitSeconds": 0}),
    ("run_command", {"command": "ls", "args": ["-la", "d"]}),
    ("run_command", {"command": "cat", "args": ["f.txt"]}),
]


@pytest.mark.anyio
async def test_built_in_read_tools_leave_no_change_and_touch_no_entry(tmp_path):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "f.txt").write_text("line one\nline two\n")
    (root / "d").mkdir()
    (root / "d" / "g.py").write_text("def g():\n    return 1\n")
    (root / "n.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "1+1", "metadata": {}, "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    with zipfile.ZipFile(root / "a.zip", "w") as z:
        z.writestr("m.txt", "member\n")
    host = host_for([root], entry_points=True, journal=str(tmp_path / "journal"))
    before = _stats(root)
    async with connect(host) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        ran = []
        for name, arguments in READ_CALLS:
            assert name in listed, name
            assert listed[name].annotations.read_only_hint, name
            result = await client.call_tool(name, arguments)
            ran.append((name, result.is_error, text_of(result)[:60]))
        changes = await client.call_tool("list_changes", {})
    print("ran:", ran)
    print("list_changes:", text_of(changes))
    assert not any(failed for _, failed, _ in ran), ran
    assert list(host.journal.changes()) == [], "a built-in read tool left a change in the journal"
    after = _stats(root)
    assert after == before, {k: (before.get(k), after.get(k)) for k in set(before) | set(after) if before.get(k) != after.get(k)}


@pytest.mark.anyio
async def test_under_read_only_a_batch_of_reads_leaves_no_change(tmp_path):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "f.txt").write_text("line one\n")
    host = host_for([root], entry_points=True, read_only=True, journal=str(tmp_path / "journal"))
    async with connect(host) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["batch_operations"].annotations.read_only_hint
        result = await client.call_tool("batch_operations", {"operations": [
            {"tool": "read_file", "arguments": {"path": "f.txt"}},
            {"tool": "grep_files", "arguments": {"path": ".", "pattern": "line"}},
            {"tool": "write_file", "arguments": {"path": "f.txt", "content": "changed\n"}},
        ]})  # fmt: skip
        changes = await client.call_tool("list_changes", {})
    print("batch:", text_of(result))
    print("list_changes:", text_of(changes))
    assert (root / "f.txt").read_text() == "line one\n"
    assert list(host.journal.changes()) == [], "a read-only batch left a change in the journal"
