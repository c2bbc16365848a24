"""Big inputs held to the budget: a 50 MB file and a 20,000-file tree, generated once."""

from __future__ import annotations

import json
import re
import tracemalloc

import pytest

import fsmcp_read.hooks
from fsmcp.testing import connect, host_for

pytestmark = pytest.mark.anyio

LINES = 700_000
BUDGET = 80_000


def line(i: int) -> str:
    return f"line {i:07d} " + "x" * 60 + "\n"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    with open(root / "big.log", "w") as fh:
        for start in range(1, LINES + 1, 10_000):
            fh.write("".join(line(i) for i in range(start, start + 10_000)))
    assert (root / "big.log").stat().st_size > 50_000_000
    for d in range(200):
        folder = root / "tree" / f"dir{d:03d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"file{f:03d}.txt").touch()
    return root


async def _call(root, name, args):
    async with connect(host_for([root], [("read", fsmcp_read.hooks)])) as client:
        return await client.call_tool(name, args)


def _parts(result) -> list[str]:
    assert not result.is_error, result.content[0].text
    return [block.text for block in result.content]


async def test_a_50mb_read_is_bounded_and_continues(big):
    tracemalloc.start()
    try:
        content, note = _parts(await _call(big, "read_file", {"path": "big.log"}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16_000_000  # the file is 51.8 MB: it was never loaded whole
    assert len(content) + len(note) <= BUDGET
    assert content.endswith("\n")
    next_line = int(re.search(r"continue with startLine=(\d+)", note)[1])
    assert content == "".join(line(i) for i in range(1, next_line))
    offset = int(re.search(r"offset=(\d+)", note)[1])
    assert offset == len(content.encode())

    more = _parts(await _call(big, "read_file", {"path": "big.log", "startLine": next_line, "endLine": next_line + 2}))[0]
    assert more == line(next_line) + line(next_line + 1) + line(next_line + 2)
    same = _parts(await _call(big, "read_file", {"path": "big.log", "offset": offset, "length": 3 * len(line(1))}))[0]
    assert same == more


async def test_tail_and_deep_ranges_of_a_50mb_file(big):
    assert _parts(await _call(big, "read_file", {"path": "big.log", "tail": 2}))[0] == line(LINES - 1) + line(LINES)
    assert _parts(await _call(big, "read_file", {"path": "big.log", "startLine": 654_321, "endLine": 654_321, "lineNumbers": True}))[0] == (
        f"654321 | {line(654_321)}"
    )
    content, note = _parts(await _call(big, "read_file", {"path": "big.log", "tail": 5000, "lineNumbers": True}))
    assert content.endswith(f"{LINES} | {line(LINES)}")
    first = int(content.split(" | ", 1)[0])
    assert f"startLine={LINES - 5000 + 1}, endLine={first - 1}" in note


async def test_a_20000_file_tree_answers_within_the_budget(big):
    result = await _call(big, "directory_tree", {"path": "tree"})
    tree_text, notice = _parts(result)
    assert len(tree_text) + len(notice) <= BUDGET
    tree = json.loads(tree_text)
    assert tree["name"] == "tree" and "truncated" not in tree
    dirs = tree["children"]
    assert [d["name"] for d in dirs] == [f"dir{d:03d}" for d in range(200)]  # breadth-first: the top level is whole
    shown = sum(len(d["children"]) for d in dirs)
    assert 0 < shown < 20_000
    assert all(d.get("truncated") is True for d in dirs if len(d["children"]) < 100)
    assert not any("truncated" in d for d in dirs if len(d["children"]) == 100)
    assert f"showed {200 + shown:,} of 20,200 entries" in notice


async def test_a_capped_recursive_listing_of_20000_files_stops_walking_at_the_cut(big):
    text = _parts(await _call(big, "list_directory", {"path": "tree", "recursive": True, "maxEntries": 50}))[0]
    lines = text.splitlines()
    assert lines[:2] == ["[DIR] dir000", "[FILE] dir000/file000.txt"]
    assert len(lines) == 51
    # The rest of dir000 and the 199 directories beside it were read before the cut; none of
    # those is entered after it.
    assert lines[-1].startswith("[truncated: showed 50 of at least 300 entries (maxResults 50); at least 250 left out.")
