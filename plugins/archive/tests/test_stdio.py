"""The archive tools through the real server (``fsmcp serve`` over stdio), found by their entry point."""

from __future__ import annotations

import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio


async def test_compress_list_and_extract_over_stdio(root, kit):
    (root / "src" / "empty").mkdir(parents=True)
    (root / "src" / "a.txt").write_text("a\n")
    (root / "src" / "a.txt").chmod(0o640)
    events: list[float] = []

    async def record(progress, total, message):
        events.append(progress)

    async with serve_stdio(str(root), "--enable", "archive") as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"compress_files", "extract_archive", "list_archive"}
        made = await client.call_tool("compress_files", {"files": ["src"], "output": "src.tar.bz2"}, progress_callback=record)
        listed = await client.call_tool("list_archive", {"archive": "src.tar.bz2"})
        done = await client.call_tool("extract_archive", {"archive": "src.tar.bz2", "destination": "copy"})
    assert not made.is_error and not done.is_error, (text_of(made), text_of(done))
    assert text_of(listed).splitlines()[1:] == [
        f"dir      {(root / 'src').stat().st_mode & 0o7777:04o}            0 src/",
        "file     0640            2 src/a.txt",
        f"dir      {(root / 'src' / 'empty').stat().st_mode & 0o7777:04o}            0 src/empty/",
    ]
    copy = kit.tree(root / "copy")
    assert copy.pop("src") == kit.tree(root)["src"]
    assert copy == {f"src/{rel}": what for rel, what in kit.tree(root / "src").items()}
    assert events, "the final progress report of compress_files reached the client"
