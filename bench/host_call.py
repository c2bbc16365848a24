"""The call runner's cost: warm calls through ``host.runner.call`` (and stdio's ``call_now``) in process.

2,000 calls of each after 200 to warm up, median and p90 in µs: ``read_file`` of a small file
(``call`` and ``call_now``) and ``edit_file`` of one line, with the change journal and without.
No transport: what is left is the runner, the tool and its hooks. Besides the wall time, the
median of the process's CPU time per call (every thread's): on a machine others load, the wall
time mostly measures the wait for a core, and the CPU time still compares two versions.
Run: ``uv run python bench/host_call.py`` (from a worktree: ``PYTHONPATH=<other tree>/core/src``
to measure another version of the host with the same plugins).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from fsmcp.testing import host_for

CALLS = 2000
WARM = 200


def p90(times: list[float]) -> float:
    return sorted(times)[int(len(times) * 0.9)]


async def measure(label: str, **settings: object) -> None:
    top = Path(tempfile.mkdtemp())
    (top / "small.txt").write_text("hello world\n" * 20)
    (top / "edit.txt").write_text("line\n" * 25 + "alpha\n" + "line\n" * 25)
    host = host_for([top], entry_points=True, **settings)

    def read(i: int) -> dict:
        return {"path": "small.txt"}

    def edit(i: int) -> dict:
        old, new = ("alpha", "beta") if i % 2 == 0 else ("beta", "alpha")
        return {"path": "edit.txt", "edits": [{"oldText": old, "newText": new}]}

    async def call(name: str, arguments: dict) -> dict | None:
        return await host.runner.call(name, arguments)

    async def now(name: str, arguments: dict) -> dict | None:
        return host.runner.call_now(name, arguments)

    for what, name, arguments, via in [("read_file call", "read_file", read, call), ("read_file call_now", "read_file", read, now), ("edit_file call", "edit_file", edit, call)]:
        for i in range(WARM):
            await via(name, arguments(i))
        times, cpu = [], []
        for i in range(CALLS):
            args = arguments(i)
            started, used = time.perf_counter(), time.process_time()
            result = await via(name, args)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
            assert result is not None and not result.get("isError"), result
        print(
            f"{label:10}  {what:18}  median {statistics.median(times) * 1e6:8.1f} µs  p90 {p90(times) * 1e6:8.1f} µs  "
            f"CPU median {statistics.median(cpu) * 1e6:7.1f} µs",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(measure("journal"))
    asyncio.run(measure("no journal", journal="off"))
