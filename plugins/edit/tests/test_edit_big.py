"""An edit of a big file holds it about three times in memory (the bytes, the text, the edited text), not ten."""

from __future__ import annotations

import tracemalloc

import pytest

import fsmcp_edit.hooks
from fsmcp.testing import connect, host_for

pytestmark = pytest.mark.anyio

LINES = 400_000


def line(i: int) -> str:
    return f"{i:07d} " + "x" * 41 + "\n"


async def test_one_edit_in_a_20mb_file_peaks_near_three_times_its_size(tmp_path):
    path = tmp_path / "big.txt"
    with open(path, "w") as fh:
        for start in range(0, LINES, 10_000):
            fh.write("".join(line(i) for i in range(start, start + 10_000)))
    size = path.stat().st_size
    assert size == 20_000_000
    async with connect(host_for([tmp_path], [("edit", fsmcp_edit.hooks)])) as client:
        tracemalloc.start()
        try:
            result = await client.call_tool("edit_file", {"path": "big.txt", "edits": [{"oldText": "0200000 x", "newText": "0200000 EDITED x"}]})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert not result.is_error, result.content[0].text
    assert peak < 3.5 * size, f"peak {peak:,} bytes for a {size:,}-byte file"
    assert "-0200000 " + "x" * 41 in result.content[0].text and "+0200000 EDITED " + "x" * 41 in result.content[0].text
    data = path.read_bytes()
    assert len(data) == size + len("EDITED ")
    assert data.startswith(line(0).encode()) and data.endswith(line(LINES - 1).encode())
    assert data[200_000 * 50 : 200_000 * 50 + 57] == b"0200000 EDITED " + b"x" * 41 + b"\n"
