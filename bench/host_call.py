"""The call runner's cost: warm calls through ``host.runner.call`` (and stdio's ``call_now``) in process, beside a baseline.

Six cases: ``read_file`` of a small file (``call`` and ``call_now``) and ``edit_file`` of one
line, with the change journal and without. No transport: what is left is the runner, the tool
and its hooks. Per call, the process's CPU time (every thread's) and the wall time.

The baseline is another commit (``--baseline``, by default f6fc4d8, the host before issue 30's
move), its host and its plugins taken out of git (``git archive``) into a temporary directory
and put first on ``PYTHONPATH`` (the installed plugins' entry points name the same modules).
Both trees run at once, each in a process of its own that keeps its hosts warm, and take
turns: a block of ``--block`` calls of one, then of the other, ``--calls`` calls of each case
in all (after a tenth as many to warm up). So both meet the same load: on a machine others
use, two runs minutes apart differ by more than two versions do. The table gives each tree's
median CPU and wall time per call, the ratio current / baseline, and the spread of the ratio
over the pairs of blocks (its quartiles).

Run: ``uv run python bench/host_call.py`` (``--baseline REV``; ``--current REV`` measures a
commit, taken out as the baseline is, instead of the working tree).
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
BLOCK = 50
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


# -- one tree, in its own process ----------------------------------------------------------


def serve() -> None:
    """Answer ``label|what|n`` lines on stdin with ``n`` calls' ``[cpu, wall]`` times, as JSON lines."""
    from fsmcp.testing import host_for

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="fsmcp-host-call-")  # the journal goes here, not to ~
    hosts = {}
    for label, settings in (("journal", {}), ("no journal", {"journal": "off"})):
        top = Path(tempfile.mkdtemp())
        (top / "small.txt").write_text("hello world\n" * 20)
        (top / "edit.txt").write_text("line\n" * 25 + "alpha\n" + "line\n" * 25)
        hosts[label] = host_for([top], entry_points=True, **settings)
    turns = dict.fromkeys(CASES, 0)  # an edit and the next one undo each other: each text is unique when it runs
    loop = asyncio.new_event_loop()

    async def block(label: str, what: str, n: int) -> list[tuple[float, float]]:
        runner = getattr(hosts[label], "runner", hosts[label])  # a baseline before the runner: Host.call
        times = []
        for _ in range(n):
            i = turns[label, what]
            turns[label, what] += 1
            if what.startswith("edit_file"):
                old, new = ("alpha", "beta") if i % 2 == 0 else ("beta", "alpha")
                name, arguments = "edit_file", {"path": "edit.txt", "edits": [{"oldText": old, "newText": new}]}
            else:
                name, arguments = "read_file", {"path": "small.txt"}
            started, used = time.perf_counter(), time.process_time()
            result = runner.call_now(name, arguments) if what.endswith("call_now") else await runner.call(name, arguments)
            times.append((time.process_time() - used, time.perf_counter() - started))
            assert result is not None and not result.get("isError"), result
        return times

    print("ready", flush=True)
    for line in sys.stdin:
        label, what, n = line.rstrip("\n").split("|")
        print(json.dumps(loop.run_until_complete(block(label, what, int(n)))), flush=True)


# -- both trees, taking turns ---------------------------------------------------------------


def extract(rev: str, into: Path) -> str:
    """``rev``'s host and plugins under ``into``; returns the ``PYTHONPATH`` that imports them."""
    archive = subprocess.run(["git", "archive", rev, "core/src", "plugins"], cwd=REPO, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    paths = [into / "core" / "src", *sorted(p / "src" for p in (into / "plugins").iterdir() if (p / "src").is_dir())]
    return os.pathsep.join(map(str, paths))


class Tree:
    def __init__(self, pythonpath: str | None):
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.process = subprocess.Popen([sys.executable, __file__, "--serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "ready"

    def calls(self, case: tuple[str, str], n: int) -> list[tuple[float, float]]:
        self.process.stdin.write(f"{case[0]}|{case[1]}|{n}\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def quartiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})")
    parser.add_argument("--current", help="a commit to measure instead of the working tree")
    parser.add_argument("--calls", type=int, default=CALLS, help=f"calls of each case by each tree (default {CALLS:,})")
    parser.add_argument("--block", type=int, default=BLOCK, help=f"calls in one turn (default {BLOCK})")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "core", "plugins"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    current = args.current or f"{REPO} at {head}{' (with uncommitted changes)' if dirty else ''}"
    print(f"current: {current}; baseline: {args.baseline}; {args.calls:,} calls a case by each, in turns of {args.block}, "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs", flush=True)  # fmt: skip
    print(f"\n{'':10}  {'call':18}  {'CPU µs: baseline':>16} {'current':>8} {'ratio':>6} {'(quartiles)':>13}   {'wall µs: baseline':>17} {'current':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="fsmcp-baseline-") as tmp:
        old = Tree(extract(args.baseline, Path(tmp) / "baseline"))
        new = Tree(extract(args.current, Path(tmp) / "current") if args.current else None)
        try:
            for case in CASES:
                old.calls(case, args.calls // 10)
                new.calls(case, args.calls // 10)
                times: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
                ratios = []
                for turn in range(max(1, args.calls // args.block)):
                    pair = [("old", old), ("new", new)] if turn % 2 == 0 else [("new", new), ("old", old)]
                    got = {key: tree.calls(case, args.block) for key, tree in pair}
                    for key in got:
                        times[key] += got[key]
                    ratios.append(statistics.median(t[0] for t in got["new"]) / statistics.median(t[0] for t in got["old"]))
                line = f"{case[0]:10}  {case[1]:18}"
                for index, key in ((0, "CPU"), (1, "wall")):
                    o = statistics.median(t[index] for t in times["old"])
                    n = statistics.median(t[index] for t in times["new"])
                    line += f"  {o * 1e6:16.1f} {n * 1e6:8.1f} {n / o:6.2f}"
                    if key == "CPU":
                        low, high = quartiles(ratios)
                        line += f" ({low:.2f}–{high:.2f})"
                print(line, flush=True)
        finally:
            old.close()
            new.close()


if __name__ == "__main__":
    main()
