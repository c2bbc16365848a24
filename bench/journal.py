"""Journal benchmark: what the change journal adds to a change, the same edits with it and without.

Two fsmcp servers over stdio, one with the journal (``--journal DIR``), one with
``--journal off``, edit the same files in turns: a one-line edit of a 2 KB file, of a 5 MB file
(whose old content the journal copies), and a write_file creating and deleting a new file.
Calls alternate between a change and its reverse, so each run starts from the same state. Run:
``uv run python bench/journal.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import anyio
from common import BENCH, fsmcp_params, median, print_table, ratio, session, timed
from edit import build_file

SMALL_LINES = 40


async def main(runs: int) -> None:
    directory = BENCH / ".fixtures" / "journal"
    directory.mkdir(parents=True, exist_ok=True)
    big = directory / "big.txt"
    lines = build_file(big)
    small = directory / "small.txt"
    small.write_text("".join(f"{i:04d} line of a small file\n" for i in range(SMALL_LINES)))
    state = Path(tempfile.mkdtemp(prefix="fsmcp-bench-journal-"))
    cases = {
        "edit_file, 1 edit, 2 KB file": (
            "edit_file",
            {"path": str(small), "edits": [{"oldText": "0020 line", "newText": "0020 LINE"}]},
            {"path": str(small), "edits": [{"oldText": "0020 LINE", "newText": "0020 line"}]},
        ),
        "edit_file, 1 edit, 5 MB file": (
            "edit_file",
            {"path": str(big), "edits": [{"oldText": lines[1000], "newText": lines[1000] + " EDITED"}]},
            {"path": str(big), "edits": [{"oldText": lines[1000] + " EDITED", "newText": lines[1000]}]},
        ),
        "write_file new 2 KB file / delete_file": (
            None,
            {"path": str(directory / "new.txt"), "content": "x" * 2048},
            {"path": str(directory / "new.txt")},
        ),
    }
    results: dict[str, dict[str, list[float]]] = {"on": {}, "off": {}}
    try:
        async with session(fsmcp_params("--journal", str(state), str(directory))) as on, session(
            fsmcp_params("--journal", "off", str(directory))
        ) as off:
            for _ in range(runs):  # in turns, so that load on the machine falls on both alike
                for which, client in (("on", on), ("off", off)):
                    for what, (tool, forward, backward) in cases.items():
                        async def change(tool=tool, forward=forward, backward=backward, client=client):
                            if tool is None:
                                await _ok(client, "write_file", forward)
                                await _ok(client, "delete_file", backward)
                            else:
                                await _ok(client, tool, forward)
                                await _ok(client, tool, backward)
                        [pair] = await timed(change, 1)
                        results[which].setdefault(what, []).append(pair / 2)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    rows = []
    for what in cases:
        with_it, without = median(results["on"][what]), median(results["off"][what])
        rows.append((what, f"{with_it * 1000:.2f} ms", f"{without * 1000:.2f} ms", ratio(with_it, without)))
    print_table(f"journal: one change's latency over stdio, median of {runs} runs; fsmcp = journal on, baseline = --journal off", rows)


async def _ok(client, tool: str, arguments: dict) -> None:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"bench: {tool} failed: {result.content[0].text[:500]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed changes per case and server (default 30)")
    anyio.run(main, parser.parse_args().runs)
