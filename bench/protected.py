"""What hiding protected files costs a started program: the walk of the roots at each start.

Trees of 20,000 and 200,000 files (15 a directory, directories four wide, a few protected files
among them) under bench/.fixtures/protected. Two figures per tree: the walk itself (the first,
which reads every directory, and the next ones, which only stat directories unchanged since),
and ``run_command cat`` through two servers over stdio, the secrets policy on and off, called
in turns (the difference is the walk, the list handed over, and the launcher's mounts).
Run: ``uv run python bench/protected.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import anyio

from common import BENCH, fsmcp_params, interleaved, median, print_table, ratio, session
from programs import _call

from fsmcp.sandbox import masks
from fsmcp.builtin.secrets import DEFAULT_GLOBS
from fsmcp.paths.protected import ProtectedNames

FIXTURES = BENCH / ".fixtures" / "protected-2"
SIZES = (20_000, 200_000)
PER_DIR, WIDE = 15, 4


def build(root: Path, files: int) -> None:
    """``files`` files, 15 a directory (every 97th directory's first is a ``.env``), directories four wide."""
    if (root / ".done").exists():
        return
    queue, count, made = [root], 0, 0
    while count < files:
        here = queue.pop(0)
        here.mkdir(parents=True)
        made += 1
        for f in range(min(PER_DIR, files - count)):
            (here / (".env" if f == 0 and made % 97 == 0 else f"f{f}.py")).write_text("x = 1\n")
        count += min(PER_DIR, files - count)
        queue += [here / f"d{s}" for s in range(WIDE)]
    (root / ".done").write_text("ok")


def walks(root: Path, runs: int) -> tuple[float, float, int]:
    names = ProtectedNames(DEFAULT_GLOBS)
    start = time.perf_counter()
    found = masks.Finder(str(root), names).find()
    first = time.perf_counter() - start
    finder = masks.Finder(str(root), names)
    finder.find()
    again = []
    for _ in range(runs):
        start = time.perf_counter()
        finder.find()
        again.append(time.perf_counter() - start)
    return first, median(again), len(found)


async def main(runs: int) -> None:
    rows = []
    for files in SIZES:
        root = FIXTURES / f"{files}"
        build(root, files)
        dirs = sum(1 for _ in os.walk(root))
        first, again, found = walks(root, runs)
        rows.append((f"walk {files:,} files, {dirs:,} directories ({found} protected): first", f"{first * 1000:,.0f} ms", "", ""))
        rows.append((f"walk {files:,} files: next, nothing changed", f"{again * 1000:,.0f} ms", "", ""))
    print_table(f"the walk for protected files (default globs), alone; next: median of {runs}", rows)

    for files in SIZES:
        root = FIXTURES / f"{files}"
        with tempfile.TemporaryDirectory() as tmp:
            off = Path(tmp) / "fsmcp.toml"
            off.write_text('disable = ["secrets"]\n')
            args = {"command": "cat", "args": ["f0.py"]}
            on_params = fsmcp_params(str(root), "--sandbox", "require", "--enable", "shell")
            off_params = fsmcp_params(str(root), "--sandbox", "require", "--enable", "shell", "--config", str(off))
            async with session(on_params) as on, session(off_params) as plain:
                figures = await interleaved({f"run_command cat, {files:,} files": [_call(on, "run_command", args), _call(plain, "run_command", args)]}, runs)
        table = [(what, f"{a * 1000:,.1f} ms", f"{b * 1000:,.1f} ms", ratio(a, b)) for what, (a, b) in figures.items()]
        print_table(f"a started program, secrets policy on (walk + mounts) vs off: median of {runs} rounds after a warm-up round", table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="timed calls per benchmark (default 11)")
    anyio.run(main, parser.parse_args().runs)
