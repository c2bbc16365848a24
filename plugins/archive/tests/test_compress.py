"""compress_files: inputs, globs, member names, what is skipped, and where the output may go."""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio


def names(path: Path) -> list[str]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return zf.namelist()
    with tarfile.open(path) as tf:
        return [m.name + ("/" if m.isdir() else "") for m in tf.getmembers()]


@pytest.fixture
def project(root: Path) -> Path:
    for rel in ["src/app.py", "src/util/io.py", "src/util/notes.txt", "docs/index.md", "README.md", "setup.py"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n")
    return root


async def test_members_are_named_from_each_inputs_parent(server, project):
    async with server() as s:
        await s.ok("compress_files", files=["src/util", "README.md", str(project / "docs")], output="out.tar")
    assert names(project / "out.tar") == ["util/", "util/io.py", "util/notes.txt", "README.md", "docs/", "docs/index.md"]


async def test_globs_are_matched_from_the_workspace_and_keep_their_paths(server, project):
    async with server() as s:
        text = await s.ok("compress_files", files=["src/**/*.py", "*.md"], output="out.zip")
        await s.ok("compress_files", paths=["src/**/*.py", "*.md"], output="same.zip")  # paths, as elsewhere; files is the old name
    assert names(project / "out.zip") == names(project / "same.zip") == ["src/app.py", "src/util/io.py", "README.md"]
    assert text.endswith(" bytes) from 3 members (36 bytes): 3 files, 0 directories")


async def test_a_glob_matching_a_directory_takes_it_whole(server, project):
    async with server() as s:
        await s.ok("compress_files", files=["s*"], output="out.tar")
    assert names(project / "out.tar") == ["setup.py", "src/", "src/app.py", "src/util/", "src/util/io.py", "src/util/notes.txt"]


async def test_an_absolute_glob_outside_the_workspace_is_named_from_its_fixed_part(server, root, tmp_path):
    other = tmp_path / "other"
    (other / "logs").mkdir(parents=True)
    (other / "logs" / "a.log").write_text("a\n")
    async with server(root, other) as s:
        await s.ok("compress_files", files=[f"{other}/logs/*.log"], output="out.zip")
    assert names(root / "out.zip") == ["a.log"]


async def test_a_path_with_glob_characters_that_exists_is_taken_literally(server, root):
    (root / "[draft].txt").write_text("d\n")
    (root / "d.txt").write_text("not me\n")
    async with server() as s:
        await s.ok("compress_files", files=["[draft].txt"], output="out.zip")
    assert names(root / "out.zip") == ["[draft].txt"]


async def test_the_same_path_named_twice_is_stored_once(server, project):
    async with server() as s:
        await s.ok("compress_files", files=["src", "src/**", "src"], output="out.tar")
    assert names(project / "out.tar") == ["src/", "src/app.py", "src/util/", "src/util/io.py", "src/util/notes.txt"]


async def test_two_paths_under_one_name_are_refused(server, root):
    for d in ("a", "b"):
        (root / d).mkdir()
        (root / d / "same.txt").write_text(d)
    async with server() as s:
        text = await s.fail("compress_files", "INVALID_PARAMS", files=["a/same.txt", "b/same.txt"], output="out.zip")
    assert f"{root}/a/same.txt and {root}/b/same.txt would both be stored as 'same.txt'" in text
    assert not (root / "out.zip").exists()


async def test_the_output_is_never_stored_in_itself(server, project):
    (project / "out.tar").write_text("an old archive")
    async with server() as s:
        text = await s.ok("compress_files", files=["."], output="out.tar", overwrite=True)
    assert f"skipped {project}/out.tar: the archive itself" in text
    assert f"{project.name}/out.tar" not in names(project / "out.tar")
    assert not [p for p in project.iterdir() if p.name.endswith(".fsmcp-tmp")]


async def test_links_out_of_the_roots_and_pipes_are_skipped_with_a_note(server, root, outside, secret):
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("a")
    os.symlink(outside / "secret.txt", root / "d" / "leak")
    os.symlink("a.txt", root / "d" / "inside")
    os.mkfifo(root / "d" / "pipe")
    async with server() as s:
        text = await s.ok("compress_files", files=["d"], output="d.tar")
    assert f"skipped {root}/d/leak: a link that leads outside the allowed directories" in text
    assert f"skipped {root}/d/pipe: not a regular file, directory or link" in text
    with tarfile.open(root / "d.tar") as tf:
        assert tf.getnames() == ["d", "d/a.txt", "d/inside"]
        assert tf.getmember("d/inside").linkname == "a.txt"
    assert secret.encode() not in (root / "d.tar").read_bytes()


async def test_an_existing_output_needs_overwrite(server, project):
    (project / "out.zip").write_text("precious")
    async with server() as s:
        await s.fail("compress_files", "ALREADY_EXISTS", files=["src"], output="out.zip")
        assert (project / "out.zip").read_text() == "precious"
        text = await s.ok("compress_files", files=["src"], output="out.zip", overwrite=True)
    assert text.startswith(f"Replaced {project}/out.zip (zip, ")


async def test_missing_inputs_and_empty_globs_fail_and_write_nothing(server, project):
    async with server() as s:
        assert "'nope.txt' does not exist" in await s.fail("compress_files", "NOT_FOUND", files=["src", "nope.txt"], output="o.zip")
        assert "the glob 'src/*.rs' matches nothing" in await s.fail("compress_files", "NOT_FOUND", files=["src/*.rs"], output="o.zip")
    assert not (project / "o.zip").exists()


async def test_inputs_and_output_outside_the_roots_are_refused(server, project, outside):
    async with server() as s:
        await s.fail("compress_files", "ACCESS_DENIED", files=[str(outside / "secret.txt")], output="o.zip")
        await s.fail("compress_files", "ACCESS_DENIED", files=[f"{outside}/*.txt"], output="o.zip")
        await s.fail("compress_files", "ACCESS_DENIED", files=["src"], output=str(outside / "o.zip"))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_an_output_under_a_read_only_root_is_refused(server, project, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    async with server(project, f"{ro}:ro") as s:
        text = await s.fail("compress_files", "READ_ONLY", files=["src"], output=str(ro / "o.zip"))
    assert "is a read-only root" in text
    assert list(ro.iterdir()) == []
    async with server(project, read_only=True) as s:
        # Under --read-only a tool that only writes is not offered at all.
        assert "unknown tool 'compress_files'" in await s.fail("compress_files", "INVALID_PARAMS", files=["src"], output="o.zip")


async def test_a_format_contradicting_the_outputs_extension_is_refused(server, project):
    async with server() as s:
        text = await s.fail("compress_files", "INVALID_PARAMS", files=["src"], output="o.zip", format="tar.gz")
    assert "named like a zip archive but format is tar.gz" in text


async def test_an_archive_over_the_write_limit_is_not_written(server, project):
    (project / "big.bin").write_bytes(os.urandom(5000))
    async with server(max_file_bytes=4000) as s:
        await s.fail("compress_files", "FILE_TOO_LARGE", files=["big.bin"], output="o.tar")
    assert not (project / "o.tar").exists()
    assert not [p for p in project.iterdir() if p.name.endswith(".fsmcp-tmp")]
