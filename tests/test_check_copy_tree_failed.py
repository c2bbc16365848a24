"""A copy_file of a tree that fails on a member (a pipe, which is not copied) leaves the
destination as it was: an existing tree it was to overwrite keeps every file, a new destination
is not left half made; the error names the member, not the destination."""

from __future__ import annotations

import os

import pytest

from fsmcp.testing import connect, host_for, text_of


def _tree(top):
    # Not fsmcp.testing.tree_of: the inodes count too (a file put back as a copy is not the file kept).
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, top)] = (st.st_mode, st.st_ino, open(p, "rb").read() if os.path.isfile(p) and not os.path.islink(p) else None)
    return out


@pytest.mark.anyio
async def test_a_failed_copy_of_a_tree_leaves_the_destination_as_it_was(tmp_path):
    root = (tmp_path / "root").resolve()
    (root / "src" / "sub").mkdir(parents=True)
    (root / "dst").mkdir()
    (root / "dst" / "keep.txt").write_text("dst's own\n")
    (root / "dst" / "a.txt").write_text("dst's a.txt\n")
    (root / "src" / "a.txt").write_text("src's a.txt\n")
    (root / "src" / "sub" / "b.txt").write_text("src's b.txt\n")
    os.mkfifo(root / "src" / "sub" / "zfifo")
    before = _tree(root)
    host = host_for([root], entry_points=True, journal=str(tmp_path / "journal"))
    async with connect(host) as client:
        over = await client.call_tool("copy_file", {"source": "src", "destination": "dst", "overwrite": True})
        new = await client.call_tool("copy_file", {"source": "src", "destination": "dst2"})
    print("copy over dst:", text_of(over))
    print("copy to dst2:", text_of(new))
    assert over.is_error and new.is_error
    assert _tree(root) == before
    # The error names the source's entry that is no file, not the destination.
    for result in (over, new):
        assert text_of(result) == f"NOT_FILE: {root / 'src' / 'sub' / 'zfifo'} is a device or pipe, not a regular file"
