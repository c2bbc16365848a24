"""Journal benchmark: what the change journal adds to a change, the same edits with it and without.

Two fsmcp servers over stdio, one with the journal (``--journal DIR``), one with
``--journal off``, edit the same files in turns: a one-line edit of a 2 KB file, of a 5 MB file
(whose old content the journal copies), and a write_file creating and deleting a new file.
Calls alternate between a change and its reverse, so each run starts from the same state. Run:
``uv run python bench/journal.py [--runs N]``. ``--caps N`` instead makes N changes through a
host in process, under small caps, and prints the journal's count and bytes against them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
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


async def caps(changes: int) -> None:
    from fsmcp.testing import host_for

    work = Path(tempfile.mkdtemp(prefix="fsmcp-bench-caps-"))
    root, state = work / "root", work / "journal"
    root.mkdir()
    max_changes, max_bytes = 500, 200_000
    host = host_for([root], entry_points=True, journal=str(state), journal_max_changes=max_changes, journal_max_bytes=max_bytes)
    worst_count = worst_bytes = 0
    started = time.perf_counter()
    try:
        for i in range(changes):
            # Small files for the first half (the count cap binds), larger ones after (the byte cap does).
            size = i % 97 if i < changes // 2 else i * 7919 % 4000
            outcome = await host.runner.run("write_file", {"path": f"f{i % 50}.txt", "content": "x" * size})
            if getattr(outcome, "code", None) is not None:
                raise SystemExit(f"bench: write_file failed: {outcome}")
            if i % 100 == 99 or i == changes - 1:
                names = os.listdir(state / "changes")
                worst_count = max(worst_count, len(names))
                worst_bytes = max(worst_bytes, sum(int(n.partition("-")[2]) for n in names))
                if i == changes // 2 - 1:
                    print(f"after {i + 1:,} changes: {len(names)} kept, {sum(int(n.partition('-')[2]) for n in names):,} bytes")
        elapsed = time.perf_counter() - started
        ids = [c["id"] for c in host.journal.changes()]
        print(
            f"journal caps: {changes:,} changes in {elapsed:.1f} s ({elapsed / changes * 1000:.2f} ms each, in process); "
            f"caps {max_changes} changes, {max_bytes:,} bytes; most seen {worst_count} changes, {worst_bytes:,} bytes; "
            f"kept ids {ids[-1]}..{ids[0]}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def _ok(client, tool: str, arguments: dict) -> None:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"bench: {tool} failed: {result.content[0].text[:500]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="timed changes per case and server (default 30)")
    parser.add_argument("--caps", type=int, metavar="N", help="instead: N changes in process, the caps checked")
    options = parser.parse_args()
    if options.caps:
        anyio.run(caps, options.caps)
    else:
        anyio.run(main, options.runs)
