"""Extracting onto what exists: conflicts listed, directories merged, overwrite, and read-only roots."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from fsmcp import ToolContext, ToolError

pytestmark = pytest.mark.anyio


@pytest.fixture
def archive(root: Path, kit) -> str:
    data = kit.tar(
        [
            (kit.info("src", tarfile.DIRTYPE, mode=0o755), None),
            (kit.info("src/a.txt"), b"new a\n"),
            (kit.info("src/b.txt"), b"new b\n"),
            (kit.info("src/new", tarfile.DIRTYPE, mode=0o700), None),
            (kit.info("src/new/c.txt", mode=0o600), b"new c\n"),
            (kit.info("top.txt"), b"new top\n"),
        ],
        mode="w:gz",
    )
    (root / "a.tar.gz").write_bytes(data)
    return "a.tar.gz"


def existing(dest: Path) -> None:
    (dest / "src").mkdir(parents=True)
    (dest / "src" / "a.txt").write_text("old a\n")
    (dest / "src" / "mine.txt").write_text("mine\n")
    (dest / "top.txt").write_text("old top\n")
    (dest / "src").chmod(0o775)


async def test_conflicts_are_listed_and_nothing_is_written(server, root, kit, archive):
    existing(root / "dest")
    before = kit.tree(root)
    async with server() as s:
        text = await s.fail("extract_archive", "ALREADY_EXISTS", archive=archive, destination="dest")
    assert text == (
        f"ALREADY_EXISTS: 2 members would replace what already exists in {root}/dest: "
        f"{root}/dest/src/a.txt, {root}/dest/top.txt; pass overwrite: true to replace them "
        "(directories are merged, never replaced), or extract into another directory; nothing was extracted"
    )
    assert kit.tree(root) == before


async def test_overwrite_replaces_files_and_merges_directories(server, root, kit, archive):
    existing(root / "dest")
    async with server() as s:
        text = await s.ok("extract_archive", archive=archive, destination="dest", overwrite=True)
    assert text.splitlines()[1:] == [f"replaced {root}/dest/src/a.txt", f"replaced {root}/dest/top.txt"]
    assert kit.tree(root / "dest") == {
        "src": ("dir", 0o775),  # was there: keeps its own mode
        "top.txt": ("file", b"new top\n", 0o644),
        "src/a.txt": ("file", b"new a\n", 0o644),
        "src/b.txt": ("file", b"new b\n", 0o644),
        "src/mine.txt": ("file", b"mine\n", (root / "dest" / "src" / "mine.txt").stat().st_mode & 0o7777),
        "src/new": ("dir", 0o700),
        "src/new/c.txt": ("file", b"new c\n", 0o600),
    }
    assert not [p for p in (root / "dest").iterdir() if p.name.startswith(".fsmcp")]


async def test_without_conflicts_new_files_join_existing_directories(server, root, kit, archive):
    (root / "dest" / "src").mkdir(parents=True)
    (root / "dest" / "src" / "mine.txt").write_text("mine\n")
    async with server() as s:
        await s.ok("extract_archive", archive=archive, destination="dest")
    assert sorted(kit.tree(root / "dest")) == ["src", "src/a.txt", "src/b.txt", "src/mine.txt", "src/new", "src/new/c.txt", "top.txt"]


async def test_a_link_in_the_way_is_never_written_through(server, root, outside, kit, archive, secret):
    (root / "dest").mkdir()
    os.symlink(outside, root / "dest" / "src")
    before = kit.tree(root.parent)
    async with server() as s:
        text = await s.fail("extract_archive", "ALREADY_EXISTS", archive=archive, destination="dest", overwrite=True)
    assert f"1 path in {root}/dest would change between a directory and a file or link: {root}/dest/src" in text
    assert kit.tree(root.parent) == before
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_a_file_never_replaces_a_directory(server, root, kit, archive):
    (root / "dest" / "top.txt").mkdir(parents=True)
    async with server() as s:
        await s.fail("extract_archive", "ALREADY_EXISTS", archive=archive, destination="dest", overwrite=True)
    assert (root / "dest" / "top.txt").is_dir()


async def test_a_missing_destination_is_created_with_its_parents(server, root, kit, archive):
    async with server() as s:
        await s.ok("extract_archive", archive=archive, destination="a/b/c")
    assert (root / "a" / "b" / "c" / "src" / "new" / "c.txt").read_text() == "new c\n"


async def test_a_refused_extraction_removes_the_destination_it_would_have_created(server, root, kit):
    (root / "bad.zip").write_bytes(kit.zip([("ok.txt", b"ok"), ("../x", b"x")]))
    async with server() as s:
        await s.fail("extract_archive", "ACCESS_DENIED", archive="bad.zip", destination="new/dest")
    assert not (root / "new").exists()


async def test_a_destination_that_is_a_file_is_refused(server, root, archive):
    (root / "file").write_text("x")
    async with server() as s:
        await s.fail("extract_archive", "NOT_DIRECTORY", archive=archive, destination="file")


async def test_a_destination_under_a_read_only_root_is_refused(server, root, tmp_path, kit, archive):
    ro = tmp_path / "ro"
    ro.mkdir()
    async with server(root, f"{ro}:ro") as s:
        text = await s.fail("extract_archive", "READ_ONLY", archive=archive, destination=str(ro / "x"))
    assert "is a read-only root" in text
    assert list(ro.iterdir()) == []


async def test_a_member_landing_in_a_nested_read_only_root_is_refused_before_anything_is_written(root, kit):
    (root / "big.tar").write_bytes(kit.tar([(kit.info("big.bin"), bytes(3 << 20)), (kit.info("ro/x.txt"), b"x")]))
    (root / "dest" / "ro").mkdir(parents=True)
    before = kit.tree(root)
    host = kit.host(root, f"{root}/dest/ro:ro")
    phases: list[str] = []

    async def on_progress(done, total, message):
        phases.append(message.split(":")[0])

    outcome = await host.runner.run("extract_archive", {"archive": "big.tar", "destination": "dest"}, send_progress=on_progress)
    assert isinstance(outcome, ToolError) and outcome.code.value == "READ_ONLY", outcome
    assert "extracting" not in phases
    assert kit.tree(root) == before


async def test_the_archive_and_destination_must_be_inside_the_roots(server, root, outside, kit, archive):
    (outside / "a.zip").write_bytes(kit.zip([("a", b"a")]))
    async with server() as s:
        await s.fail("extract_archive", "ACCESS_DENIED", archive=str(outside / "a.zip"), destination="x")
        await s.fail("extract_archive", "ACCESS_DENIED", archive=archive, destination=str(outside / "x"))
        await s.fail("list_archive", "ACCESS_DENIED", archive=str(outside / "a.zip"))
        await s.fail("extract_archive", "NOT_FOUND", archive="missing.zip", destination="x")
    assert not (outside / "x").exists() and not (root / "x").exists()


async def test_a_failure_while_moving_into_place_undoes_every_change_and_spares_others_files(root, kit):
    # b.txt is big enough to report progress while staging; then "someone else" writes z.txt,
    # a path the archive also has: moving it in fails after a.txt was replaced and b.txt added.
    (root / "c.tar").write_bytes(
        kit.tar([(kit.info("a.txt"), b"new a"), (kit.info("b.txt"), bytes(3 << 20)), (kit.info("z.txt"), b"new z")])
    )
    (root / "dest").mkdir()
    (root / "dest" / "a.txt").write_text("old a")
    host = kit.host(root)
    tool = host.tools["extract_archive"]

    async def on_progress(done, total, message):
        if message.startswith("extracting") and not (root / "dest" / "z.txt").exists():
            (root / "dest" / "z.txt").write_text("someone else's")

    ctx = ToolContext(fs=host.fs, settings=host.settings, tool=tool, send_progress=on_progress)
    args = tool.input_model.model_validate({"archive": "c.tar", "destination": "dest", "overwrite": True})
    with pytest.raises(ToolError) as failed:
        await anyio.to_thread.run_sync(tool.function, args, ctx)
    assert failed.value.code.value == "ALREADY_EXISTS" and f"{root}/dest/z.txt already exists" in failed.value.message
    assert kit.tree(root / "dest") == {
        "a.txt": ("file", b"old a", (root / "dest" / "a.txt").stat().st_mode & 0o7777),
        "z.txt": ("file", b"someone else's", (root / "dest" / "z.txt").stat().st_mode & 0o7777),
    }
