"""Lock benchmark: a small edit_file and append_file, this checkout beside another one's server.

What the per-file locks cost a call: both servers run over stdio on their own copy of a small
file, taking turns call by call (so both see the same load), and each call makes a real change.
The baseline is the server of another checkout's ``core/src`` (say, the commit before the
locks held between processes: ``git archive <commit> core/src | tar -x -C /tmp/old``), put
first on the import path; the plugins are this checkout's. Without ``--baseline`` both are
this checkout (the spread between two equal servers). Run:
``uv run python bench/locks.py --baseline /tmp/old/core/src [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

import anyio
from mcp import StdioServerParameters

from common import BENCH, fsmcp_params, interleaved, print_table, ratio, session


def baseline_params(src: str | None, root: str) -> StdioServerParameters:
    params = fsmcp_params(root)
    if src is not None:
        params.env = {**(params.env or {}), "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    return params


async def main(runs: int, baseline: str | None) -> None:
    top = BENCH / ".fixtures" / "locks"
    shutil.rmtree(top, ignore_errors=True)
    roots = {what: top / what for what in ("fsmcp", "baseline")}
    for root in roots.values():
        root.mkdir(parents=True)
        (root / "small.txt").write_text("".join(f"line {i}\n" for i in range(20)))
    async with session(fsmcp_params(str(roots["fsmcp"]))) as ours, session(baseline_params(baseline, str(roots["baseline"]))) as theirs:
        clients = {"fsmcp": ours, "baseline": theirs}
        state = {what: 0 for what in clients}

        def edit(what: str):
            async def once() -> None:
                # Alternate a change and its reverse: the file stays small.
                n = state[what] = state[what] + 1
                old, new = ("line 7\n", "line seven\n") if n % 2 else ("line seven\n", "line 7\n")
                path = str(roots[what] / "small.txt")
                result = await clients[what].call_tool("edit_file", {"path": path, "edits": [{"oldText": old, "newText": new}]})
                if result.is_error:
                    sys.exit(f"bench: edit_file failed: {result.content[0].text[:500]}")

            return once

        def append(what: str):
            async def once() -> None:
                result = await clients[what].call_tool("append_file", {"path": str(roots[what] / "small.txt"), "content": "more\n"})
                if result.is_error:
                    sys.exit(f"bench: append_file failed: {result.content[0].text[:500]}")

            return once

        medians = {}
        for tool, make in (("edit_file", edit), ("append_file", append)):
            medians[tool] = await interleaved({tool: [make("fsmcp"), make("baseline")]}, runs)
    rows = [(f"{tool}, small file", f"{m[0] * 1000:.2f} ms", f"{m[1] * 1000:.2f} ms", ratio(m[0], m[1])) for tool, ms in medians.items() for m in [ms[tool]]]
    print_table(f"locks: median of {runs} calls over stdio, turn by turn; baseline = {baseline or 'this checkout'}", rows)
    shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--baseline", help="another checkout's core/src, whose server is the baseline")
    args = parser.parse_args()
    anyio.run(main, args.runs, args.baseline)
