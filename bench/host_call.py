"""The call runner's cost: warm calls through ``Host.call`` (and stdio's ``Host.call_now``) in process, beside a baseline.

2,000 calls of each (``--calls``) after a tenth as many to warm up: ``read_file`` of a small file (``call`` and
``call_now``) and ``edit_file`` of one line, with the change journal and without. No transport:
what is left is the runner, the tool and its hooks. Per case the median of the process's CPU
time per call (every thread's; on a machine others load, the wall time mostly measures the wait
for a core, and the CPU time still compares two versions), and the wall median.

The baseline is another commit (``--baseline``, by default f6fc4d8, the host before issue 30's
move), its host and its plugins taken out of git (``git archive``) into a temporary directory
and put first on ``PYTHONPATH`` (the installed plugins' entry points name the same modules).
The two trees run one after the other in fresh processes, alternately, ``--rounds`` times; the
table gives each tree's median over the rounds and the ratio current / baseline, with the
lowest and highest ratio of one round beside it (the run's spread).

Run: ``uv run python bench/host_call.py`` (``--rounds 5``, ``--baseline REV``; ``--current REV``
measures a commit, taken out as the baseline is, instead of the working tree; ``--only`` measures
the ``fsmcp`` this interpreter imports, alone, and prints its own lines).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

CALLS = 2000
BASELINE = "f6fc4d8"
REPO = Path(__file__).resolve().parent.parent
CASES = [
    ("journal", "read_file call"),
    ("journal", "read_file call_now"),
    ("journal", "edit_file call"),
    ("no journal", "read_file call"),
    ("no journal", "read_file call_now"),
    ("no journal", "edit_file call"),
]


def p90(times: list[float]) -> float:
    return sorted(times)[int(len(times) * 0.9)]


async def measure(label: str, calls: int, **settings: object) -> list[dict]:
    from fsmcp.testing import host_for

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
        return await host.call(name, arguments)

    async def now(name: str, arguments: dict) -> dict | None:
        return host.call_now(name, arguments)

    rows = []
    for what, name, arguments, via in [("read_file call", "read_file", read, call), ("read_file call_now", "read_file", read, now), ("edit_file call", "edit_file", edit, call)]:
        for i in range(calls // 10):
            await via(name, arguments(i))
        times, cpu = [], []
        for i in range(calls):
            args = arguments(i)
            started, used = time.perf_counter(), time.process_time()
            result = await via(name, args)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
            assert result is not None and not result.get("isError"), result
        rows.append({"label": label, "what": what, "wall": statistics.median(times), "p90": p90(times), "cpu": statistics.median(cpu)})
    return rows


def measure_all(calls: int) -> list[dict]:
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="fsmcp-host-call-")  # the journal goes here, not to ~
    return asyncio.run(measure("journal", calls)) + asyncio.run(measure("no journal", calls, journal="off"))


def extract(rev: str, into: Path) -> Path:
    """``rev``'s host and plugins under ``into``; returns the ``PYTHONPATH`` that imports them."""
    archive = subprocess.run(["git", "archive", rev, "core/src", "plugins"], cwd=REPO, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    paths = [into / "core" / "src", *sorted(p / "src" for p in (into / "plugins").iterdir() if (p / "src").is_dir())]
    return Path(os.pathsep.join(map(str, paths)))


def run_tree(pythonpath: str | None, calls: int) -> dict[tuple[str, str], dict]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([sys.executable, __file__, "--json", "--calls", str(calls)], env=env, check=True, capture_output=True, text=True).stdout
    return {(r["label"], r["what"]): r for r in json.loads(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})")
    parser.add_argument("--current", help="a commit to measure instead of the working tree")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tree, alternately (default 3)")
    parser.add_argument("--calls", type=int, default=CALLS, help=f"calls a case (default {CALLS:,}), after a tenth as many to warm up")
    parser.add_argument("--only", action="store_true", help="measure this interpreter's fsmcp alone")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure_all(args.calls)))
        return
    if args.only:
        for r in measure_all(args.calls):
            print(f"{r['label']:10}  {r['what']:18}  median {r['wall'] * 1e6:8.1f} µs  p90 {r['p90'] * 1e6:8.1f} µs  CPU median {r['cpu'] * 1e6:7.1f} µs")
        return
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "core", "plugins"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    current = args.current or f"{REPO} at {head}{' (with uncommitted changes)' if dirty else ''}"
    print(f"current: {current}; baseline: {args.baseline}; "
          f"{args.rounds} rounds, {args.calls:,} calls a case, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="fsmcp-baseline-") as tmp:
        old_path = str(extract(args.baseline, Path(tmp) / "baseline"))
        new_path = str(extract(args.current, Path(tmp) / "current")) if args.current else None
        runs: dict[str, list[dict]] = {"baseline": [], "current": []}
        for i in range(args.rounds):
            order = [("baseline", old_path), ("current", new_path)]
            for tree, path in order if i % 2 == 0 else order[::-1]:
                runs[tree].append(run := run_tree(path, args.calls))
                cpu = "  ".join(f"{r['label']} {r['what']} {r['cpu'] * 1e6:.0f}" for r in run.values())
                print(f"  round {i + 1}, {tree:8} CPU medians µs: {cpu}", flush=True)
    print(f"\n{'':10}  {'call':18}  {'CPU µs: baseline':>16} {'current':>8} {'ratio':>6} {'(spread)':>13}   {'wall µs: baseline':>17} {'current':>8} {'ratio':>6}")
    for case in CASES:
        line = f"{case[0]:10}  {case[1]:18}"
        for key in ("cpu", "wall"):
            old = [run[case][key] for run in runs["baseline"]]
            new = [run[case][key] for run in runs["current"]]
            ratios = [n / o for o, n in zip(old, new)]
            line += f"  {statistics.median(old) * 1e6:16.1f} {statistics.median(new) * 1e6:8.1f} {statistics.median(ratios):6.2f}"
            if key == "cpu":
                line += f" ({min(ratios):.2f}–{max(ratios):.2f})"
        print(line)


if __name__ == "__main__":
    main()
