"""compress_files then extract_archive, every format: the tree comes back as it was."""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio

FORMATS = ["zip", "tar", "tar.gz", "tar.bz2", "tar.xz"]


def build(src: Path) -> None:
    (src / "deep" / "er" / "est").mkdir(parents=True)
    (src / "empty" / "nested-empty").mkdir(parents=True)
    (src / "naïve façade").mkdir()
    (src / "README.md").write_text("# read me\n")
    (src / "deep" / "er" / "est" / "bottom.txt").write_text("at the bottom\n")
    (src / "naïve façade" / "日本語.txt").write_text("こんにちは\n")
    (src / "naïve façade" / "emoji-🎉.bin").write_bytes(bytes(range(256)) * 40)
    run = src / "run.sh"
    run.write_text("#!/bin/sh\necho hi\n")
    run.chmod(0o755)
    private = src / "private.txt"  # a private.key would be left out: the secrets policy protects *.key
    private.write_text("key\n")
    private.chmod(0o600)
    (src / "deep" / "er").chmod(0o700)
    (src / "empty" / "nested-empty").chmod(0o750)
    os.symlink("README.md", src / "readme-link")
    os.symlink("../README.md", src / "deep" / "up-link")


@pytest.mark.parametrize("fmt", FORMATS)
async def test_every_format_round_trips_the_tree_with_modes_links_and_names(server, root, kit, fmt):
    build(root / "src")
    async with server() as s:
        text = await s.ok("compress_files", files=["src"], output=f"out/project.{fmt}")
        assert text.startswith(f"Created {root}/out/project.{fmt} ({fmt}, ")
        assert text.endswith(" bytes) from 15 members (10,302 bytes): 6 files, 7 directories, 2 symlinks")
        text = await s.ok("extract_archive", archive=f"out/project.{fmt}", destination="restored")
    assert text == f"Extracted 15 members (10,302 bytes) from {root}/out/project.{fmt} ({fmt}) into {root}/restored: 6 files, 7 directories, 2 symlinks"
    assert kit.tree(root / "restored" / "src") == kit.tree(root / "src")
    assert (root / "restored" / "src" / "readme-link").read_text() == "# read me\n"


@pytest.mark.parametrize("fmt", FORMATS)
async def test_format_given_explicitly_and_recognised_by_content_whatever_the_name(server, root, kit, fmt):
    build(root / "src")
    async with server() as s:
        await s.ok("compress_files", files=["src"], output="backup.bin", format=fmt)
        listing = await s.ok("list_archive", archive="backup.bin")
        await s.ok("extract_archive", archive="backup.bin", destination="x")
    assert listing.startswith(f"{root}/backup.bin ({fmt}, ")
    assert kit.tree(root / "x" / "src") == kit.tree(root / "src")


async def test_the_default_format_comes_from_the_extension_else_zip(server, root):
    (root / "a.txt").write_text("a\n")
    async with server() as s:
        for output, fmt in [("a.tgz", "tar.gz"), ("a.tbz2", "tar.bz2"), ("a.txz", "tar.xz"), ("a.TAR", "tar"), ("a.bak", "zip")]:
            text = await s.ok("compress_files", files=["a.txt"], output=output)
            assert f"({fmt}, " in text, text
    assert zipfile.is_zipfile(root / "a.bak")
    with tarfile.open(root / "a.tgz") as tf:
        assert tf.getnames() == ["a.txt"]


async def test_archives_we_write_are_read_by_the_standard_library(server, root):
    build(root / "src")
    async with server() as s:
        await s.ok("compress_files", files=["src"], output="p.zip")
        await s.ok("compress_files", files=["src"], output="p.tar.xz")
    with zipfile.ZipFile(root / "p.zip") as zf:
        assert zf.testzip() is None
        info = zf.getinfo("src/run.sh")
        assert info.external_attr >> 16 == 0o100755
        assert zf.getinfo("src/empty/nested-empty/").is_dir()
        assert zf.read("src/readme-link") == b"README.md"  # Info-ZIP link: the target is the content
    with tarfile.open(root / "p.tar.xz") as tf:
        assert tf.getmember("src/readme-link").linkname == "README.md"
        assert tf.getmember("src/deep/er").mode == 0o700
        assert tf.extractfile("src/naïve façade/日本語.txt").read().decode() == "こんにちは\n"


async def test_list_archive_shows_type_mode_size_name_and_link(server, root):
    src = root / "src"
    (src / "bin").mkdir(parents=True)
    (src / "bin" / "tool").write_text("#!/bin/sh\n")
    (src / "bin" / "tool").chmod(0o755)
    (src / "bin").chmod(0o755)
    src.chmod(0o755)
    os.symlink("bin/tool", src / "tool-link")
    async with server() as s:
        await s.ok("compress_files", files=["src"], output="t.tar")
        listing = await s.ok("list_archive", archive="t.tar")
    assert listing.splitlines() == [
        f"{root}/t.tar (tar, 10,240 bytes): 4 members (1 file, 2 directories, 1 symlink); 10 bytes uncompressed",
        "dir      0755            0 src/",
        "dir      0755            0 src/bin/",
        "symlink  0777            0 src/tool-link -> bin/tool",
        "file     0755           10 src/bin/tool",
    ]
