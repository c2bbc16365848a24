"""The built-in read tools (each listed with ``readOnlyHint``) leave no change in the journal:
``list_changes`` after a call of each says there is none."""

from __future__ import annotations

import zipfile

import pytest

from fsmcp.testing import connect, host_for, text_of

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
]


@pytest.mark.anyio
async def test_built_in_read_tools_leave_no_change(tmp_path):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    (root / "f.txt").write_text("line one\nline two\n")
    (root / "d").mkdir()
    (root / "d" / "g.py").write_text("def g():\n    return 1\n")
    with zipfile.ZipFile(root / "a.zip", "w") as z:
        z.writestr("m.txt", "member\n")
    host = host_for([root], entry_points=True, journal=str(tmp_path / "journal"))
    async with connect(host) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        ran = []
        for name, arguments in READ_CALLS:
            if name not in listed:
                continue
            assert listed[name].annotations.read_only_hint, name
            result = await client.call_tool(name, arguments)
            ran.append((name, result.is_error, text_of(result)[:60]))
        changes = await client.call_tool("list_changes", {})
    print("ran:", ran)
    print("list_changes:", text_of(changes))
    assert len(ran) >= 8 and not any(failed for _, failed, _ in ran), ran
    assert list(host.journal.changes()) == [], "a built-in read tool left a change in the journal"
