"""The host's file-system primitives that only composite tools use so far."""

import os
import stat

import pytest

from fsmcp import ErrorCode, ToolError
from fsmcp.testing import host_for


@pytest.fixture
def fs(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    return host_for([root]).fs, root.resolve(), (tmp_path / "outside").resolve()


def test_streamed_write_with_a_mode(fs):
    fs, root, _ = fs
    assert fs.write_atomic("run.sh", iter([b"#!/bin/sh\n", b"echo hi\n"]), mode=0o750)
    assert (root / "run.sh").read_bytes() == b"#!/bin/sh\necho hi\n"
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o750


def test_a_streamed_write_over_the_limit_leaves_nothing(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "f").write_bytes(b"old")
    small = host_for([root], max_file_bytes=10).fs
    with pytest.raises(ToolError) as info:
        small.write_atomic("f", iter([b"12345", b"67890", b"x"]))
    assert info.value.code is ErrorCode.FILE_TOO_LARGE
    assert (root / "f").read_bytes() == b"old"
    assert os.listdir(root) == ["f"]


def test_chmod(fs):
    fs, root, _ = fs
    (root / "a").write_text("x")
    fs.chmod("a", 0o600)
    assert stat.S_IMODE((root / "a").stat().st_mode) == 0o600


def test_symlinks_may_point_only_inside(fs):
    fs, root, outside = fs
    (root / "target.txt").write_text("t")
    fs.symlink("sub/link", "../target.txt")
    assert os.readlink(root / "sub" / "link") == "../target.txt"
    for target in [str(outside), "../../outside", "/etc/passwd"]:
        with pytest.raises(ToolError) as info:
            fs.symlink("bad", target)
        assert info.value.code is ErrorCode.ACCESS_DENIED
    assert not os.path.lexists(root / "bad")


def test_snapshot_restores_contents_creations_deletions_and_moves(fs):
    fs, root, _ = fs
    (root / "keep.txt").write_bytes(b"original\r\n")
    os.chmod(root / "keep.txt", 0o640)
    (root / "tree" / "deep").mkdir(parents=True)
    (root / "tree" / "deep" / "x").write_text("x")
    (root / "link").symlink_to("keep.txt")
    snap = fs.snapshot(["keep.txt", "tree", "link", "new/dir/file.txt", "moved"])
    fs.write_atomic("keep.txt", b"changed")
    fs.remove("tree", recursive=True)
    fs.remove("link")
    fs.write_atomic("new/dir/file.txt", b"created")
    fs.rename("keep.txt", "moved")
    snap.restore()
    assert (root / "keep.txt").read_bytes() == b"original\r\n"
    assert stat.S_IMODE((root / "keep.txt").stat().st_mode) == 0o640
    assert (root / "tree" / "deep" / "x").read_text() == "x"
    assert os.readlink(root / "link") == "keep.txt"
    assert not (root / "new").exists() and not (root / "moved").exists()


def test_snapshot_takes_back_only_what_the_call_changed(fs):
    """What someone else wrote meanwhile (here straight to the disk, as another process would)
    stays: a file in a directory the call made (the directory stays too), a file they replaced
    after the call wrote it, and the moved file whose vacated name they took (its only copy)."""
    fs, root, _ = fs
    (root / "a.txt").write_text("a before")
    (root / "b.txt").write_text("b before")
    (root / "d").mkdir()
    (root / "d" / "old.txt").write_text("old")
    snap = fs.snapshot(["new", "a.txt", "b.txt", "moved.txt", "d"])
    fs.write_atomic("new/deep/mine.txt", b"mine")
    fs.write_atomic("a.txt", b"the call's")
    fs.rename("b.txt", "moved.txt")
    fs.write_atomic("d/added.txt", b"the call's")
    (root / "new" / "theirs.txt").write_text("theirs")
    (root / "a.txt").write_text("replaced by another")
    (root / "b.txt").write_text("a new b by another")
    (root / "d" / "theirs.txt").write_text("theirs in d")
    snap.restore()
    assert sorted(p.name for p in (root / "new").iterdir()) == ["theirs.txt"]
    assert (root / "a.txt").read_text() == "replaced by another"
    assert (root / "b.txt").read_text() == "a new b by another"
    assert (root / "moved.txt").read_text() == "b before"
    assert sorted(p.name for p in (root / "d").iterdir()) == ["old.txt", "theirs.txt"]
    assert snap.kept == [root / "a.txt", root / "b.txt", root / "new"]
    assert snap.stayed == {root / "moved.txt": root / "b.txt"}


def test_snapshot_of_a_path_outside_is_refused(fs):
    fs, _, outside = fs
    with pytest.raises(ToolError) as info:
        fs.snapshot([str(outside / "x")])
    assert info.value.code is ErrorCode.ACCESS_DENIED


def test_a_small_file_comes_read_whole_with_its_descriptor_open(fs):
    import io

    fs, root, _ = fs
    (root / "f.txt").write_bytes(b"abcdef")
    fh = fs.open_read("f.txt")
    assert isinstance(fh, io.BytesIO) and fh.read() == b"abcdef"
    fd = fh.fileno()
    assert os.fstat(fd).st_size == 6
    assert os.read(fd, 3) == b"abc"  # the descriptor's offset was left at the start
    fh.close()
    with pytest.raises(OSError):
        os.fstat(fd)


def test_a_large_file_is_read_through_a_buffer(fs):
    import io

    from fsmcp.paths.fs import SMALL_FILE

    fs, root, _ = fs
    data = b"x" * (SMALL_FILE + 1)
    (root / "big").write_bytes(data)
    with fs.open_read("big") as fh:
        assert isinstance(fh, io.BufferedReader) and fh.read() == data


def test_a_file_grown_since_its_size_was_taken_is_read_as_a_large_one(tmp_path):
    from fsmcp.paths.fs import read_small

    path = tmp_path / "f"
    path.write_bytes(b"abcdef")
    fd = os.open(path, os.O_RDONLY)
    assert read_small(fd, 3) is None
    with read_small(fd, 6) as small:  # closes the descriptor
        assert small.read() == b"abcdef"
    with pytest.raises(OSError):
        os.fstat(fd)
