"""Every benchmark in one run: perf (start-up, latency, tree, search, edit, RSS), edit, search, watch, journal, programs, outline.

``scale`` (a 200,000-file tree, a 1 GiB file, a 200 MB edit) runs only when named:
``bench/all.py scale``, or ``bench/all.py perf scale``; so do ``protected`` (trees of 20,000 and
200,000 files), ``floor`` (the least a CPython server does for the small calls, with and
without fsmcp's path layer), ``locks`` (small edits and appends beside another checkout's
server: run ``bench/locks.py --baseline DIR`` itself to name it) and ``program_changes`` (a
program's view and commit; a program creating 50,000 files, and its undo).

Each prints its own table beside its baseline (the reference server, ripgrep, find). Fixtures
are built once under ``bench/.fixtures``; the reference server is installed from the npm
registry into ``bench/.ref`` when missing. Run from the repository: ``uv run python bench/all.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SUITES = ["perf", "edit", "search", "watch", "journal", "programs", "outline"]
ON_REQUEST = ["scale", "protected", "floor", "locks", "program_changes"]
"""Suites left out of the default run: they build gigabytes of fixtures, or hundreds of thousands of
files, or (floor) measure bare loops that are not fsmcp."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", metavar="SUITE", help=f"which to run: {', '.join(SUITES + ON_REQUEST)} (default: {', '.join(SUITES)})")
    args = parser.parse_args()
    unknown = set(args.suites) - set(SUITES + ON_REQUEST)
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(sorted(unknown))}; choose from {', '.join(SUITES + ON_REQUEST)}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    failed = []
    for suite in args.suites or SUITES:
        print(f"\n=== {suite} ===", flush=True)
        if subprocess.run([sys.executable, str(BENCH / f"{suite}.py")], cwd=BENCH).returncode != 0:
            failed.append(suite)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
