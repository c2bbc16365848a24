"""fsmcp_around_call is asked once per tool call a client makes (docs/hooks.md), quick calls too."""

from __future__ import annotations

import fsmcp_read.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for


class Counter:
    def __init__(self, wraps: bool):
        self.wraps = wraps
        self.asked: list[str] = []

    @hookimpl
    def fsmcp_around_call(self, call):
        self.asked.append(call.name)
        if not self.wraps:
            return None

        async def around(run):
            return await run()

        return around


@pytest.mark.anyio
@pytest.mark.parametrize("wraps", [True, False])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("size", [5, 300_000], ids=["small", "large"])
async def test_a_quick_call_asks_the_wrappers_once(tmp_path, wraps, mode, size):
    (tmp_path / "a.txt").write_text("x" * size)
    counter = Counter(wraps)
    host = host_for([tmp_path], [("read", fsmcp_read.hooks), ("counter", counter)])
    async with connect(host, mode=mode) as client:
        result = await client.call_tool("read_file", {"path": "a.txt", "head": 1})
        assert not result.is_error
    assert counter.asked == ["read_file"]
