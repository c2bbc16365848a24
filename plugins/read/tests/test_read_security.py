"""Links and paths leading out of the root: refused or not described, and never read."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.anyio

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def escape(tmp_path, root):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET * 100)
    (outside / "SECRET-NAME.txt").write_text(SECRET)
    (root / "file_link").symlink_to(outside / "secret.txt")
    (root / "dir_link").symlink_to(outside)
    (root / "inside.txt").write_text("ok\n")
    return outside


CALLS = [
    ("read_file", {"path": "file_link"}),
    ("read_file", {"path": "dir_link/secret.txt"}),
    ("read_file", {"path": "../outside/secret.txt"}),
    ("read_file", {"path": "file_link", "encoding": "base64"}),
    ("read_multiple_files", {"paths": ["file_link", "dir_link/secret.txt", "inside.txt"]}),
    ("list_directory", {"path": ".", "sizes": True, "recursive": True}),
    ("list_directory", {"path": "dir_link"}),
    ("directory_tree", {"path": "."}),
    ("directory_tree", {"path": "dir_link"}),
    ("get_file_info", {"path": "file_link"}),
    ("get_file_info", {"path": "dir_link"}),
    ("get_file_info", {"path": "dir_link/secret.txt"}),
]


@pytest.mark.parametrize(("name", "args"), CALLS)
async def test_nothing_outside_leaks(escape, call, name, args):
    result = await call(name, args)
    wire = result.model_dump_json()
    assert SECRET not in wire
    assert "SECRET-NAME" not in wire
    assert str(escape) not in wire
    # The secret file's size, as a number of its own: a version tag's hex digits may hold it by chance.
    assert not re.search(rf"(?<![0-9A-Za-z]){len(SECRET * 100)}(?![0-9A-Za-z])", wire), wire


@pytest.mark.parametrize("path", ["file_link", "dir_link/secret.txt", "../outside/secret.txt", "dir_link"])
async def test_reads_through_outside_links_are_refused(escape, call, failure, path):
    assert failure(await call("read_file", {"path": path})) == "ACCESS_DENIED"


async def test_outside_links_are_listed_without_target_or_size(escape, call, texts):
    text = texts(await call("list_directory", {"path": ".", "sizes": True}))[0]
    assert text.splitlines() == ["[LINK] dir_link", "[LINK] file_link", "[FILE] inside.txt (3 bytes)"]


async def test_outside_link_info_hides_the_target(escape, call, texts):
    text = texts(await call("get_file_info", {"path": "file_link"}))[0]
    assert "type: symlink" in text
    assert "target: (outside the allowed directories)" in text


async def test_the_prefix_sibling_is_outside(tmp_path, root, call, failure):
    sibling = tmp_path / (root.name + "-evil")
    sibling.mkdir()
    (sibling / "x.txt").write_text(SECRET)
    assert failure(await call("read_file", {"path": str(sibling / "x.txt")})) == "ACCESS_DENIED"
    assert failure(await call("list_directory", {"path": str(sibling)})) == "ACCESS_DENIED"
