"""What journaling a program's changes costs: its copy-on-write view, the commit, the undo.

1. A trivial program: ``run_shell 'cat a.txt'`` (a view, and a commit of nothing) against
   ``run_command cat a.txt`` (a read-only command: no view) and a bare ``cat`` started by this
   process; medians of interleaved rounds.
2. A program that creates many files (``--files``, default 50,000: 2,500 directories of 20, an
   ``npm install``-sized tree): the call (program and commit) and its undo, and the server's
   peak memory, against the same program where no view can be made (the server run as on a
   system without user namespaces: it writes to the root directly, nothing to undo).
Run: ``uv run python bench/program_changes.py [--runs N] [--files N]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from common import children, fsmcp_params, interleaved, print_table, ratio, server_rss_peak_kib, session

WITHOUT_USERNS = Path(__file__).resolve().parents[1] / "tests" / "without_userns.py"


def _config(top: Path) -> str:
    path = top / "fsmcp.toml"
    path.write_text("[plugins.shell]\nallow_shell = true\nmax_timeout = 3600\n")
    return str(path)


def _ok(result, what: str):
    if result.is_error:
        sys.exit(f"bench: {what} failed: {result.content[0].text[:500]}")
    return result


async def trivial(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        root = top / "root"
        root.mkdir()
        (root / "a.txt").write_text("hello\n" * 100)
        async with session(fsmcp_params(str(root), "--config", _config(top))) as client:

            async def viewed() -> None:
                _ok(await client.call_tool("run_shell", {"command": "cat a.txt"}), "run_shell")

            async def plain() -> None:
                _ok(await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]}), "run_command")

            async def bare() -> None:
                await anyio.run_process(["cat", "a.txt"], cwd=root)

            figures = await interleaved({"view": [viewed, bare], "no view": [plain, bare]}, runs)
    (view, bare_view), (no_view, bare_plain) = figures["view"], figures["no view"]
    rows = [
        ("run_shell cat a.txt (view + commit) vs bare cat", f"{view * 1000:,.1f} ms", f"{bare_view * 1000:,.1f} ms", ratio(view, bare_view)),
        ("run_command cat a.txt (no view) vs bare cat", f"{no_view * 1000:,.1f} ms", f"{bare_plain * 1000:,.1f} ms", ratio(no_view, bare_plain)),
    ]
    print_table(f"a trivial program: median of {runs} rounds after a warm-up round", rows)
    print(f"  over a bare cat: {(view - bare_view) * 1000:,.1f} ms with its view and commit (goal: at most 20 ms), "
          f"{(no_view - bare_plain) * 1000:,.1f} ms without a view; the view and commit alone: {(view - no_view) * 1000:,.1f} ms")


async def many(files: int) -> None:
    dirs = max(1, files // 20)
    command = f"for d in $(seq {dirs}); do mkdir -p node_modules/p$d; for f in $(seq 20); do echo \"module $d $f\" > node_modules/p$d/f$f.js; done; done"
    rows = []
    figures: dict[str, tuple[float, float | None, int]] = {}
    for name, under in (("view", None), ("no view", WITHOUT_USERNS)):
        with tempfile.TemporaryDirectory() as tmp:
            top = Path(tmp)
            root = top / "root"
            root.mkdir()
            params = fsmcp_params(str(root), "--config", _config(top))
            if under is not None:
                params.args = [str(under), *params.args]
            before = children()
            async with session(params) as client:
                started = time.perf_counter()
                result = _ok(await client.call_tool("run_shell", {"command": command, "timeout": 3600}), "run_shell")
                took = time.perf_counter() - started
                made = sum(1 for _ in (root / "node_modules").rglob("*.js"))
                if made != dirs * 20:
                    sys.exit(f"bench: {made} files made, {dirs * 20} expected")
                undo = None
                if name == "view":
                    number = result.structured_content["changeId"]
                    started = time.perf_counter()
                    _ok(await client.call_tool("undo_change", {"id": number}), "undo_change")
                    undo = time.perf_counter() - started
                    if (root / "node_modules").exists():
                        sys.exit("bench: the undo left node_modules")
                peak = server_rss_peak_kib(before)
            figures[name] = (took, undo, peak)
    (view, undo, peak_view), (plain, _, peak_plain) = figures["view"], figures["no view"]
    rows.append((f"run_shell creating {dirs * 20:,} files: call", f"{view:,.2f} s", f"{plain:,.2f} s", ratio(view, plain)))
    rows.append(("  its undo_change", f"{undo:,.2f} s", "(nothing to undo)", ""))
    rows.append(("  server peak RSS", f"{peak_view / 1024:,.0f} MiB", f"{peak_plain / 1024:,.0f} MiB", ratio(peak_view, peak_plain)))
    print_table("a program that creates many files: journaled (its view) vs written directly (no view); one run each", rows)


async def main(runs: int, files: int) -> None:
    subprocess.run(["uptime"], check=False)
    await trivial(runs)
    await many(files)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31, help="rounds of the trivial program (default 31)")
    parser.add_argument("--files", type=int, default=50_000, help="files the second program creates (default 50,000)")
    args = parser.parse_args()
    anyio.run(main, args.runs, args.files)
