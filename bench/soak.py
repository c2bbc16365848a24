"""A soak over stdio: mixed calls for a while, the server's memory, descriptors and threads sampled.

``python bench/soak.py [--minutes M] [--in-flight N]``: one `fsmcp serve` over a scratch root
with its journal on, driven by the ``mcp`` SDK's client with N calls in flight (reads, writes,
edits, appends, searches, listings, undos, errors). Every ``--every`` seconds it prints the
server's RSS, descriptors, threads and the calls done; at the end, RSS after warm-up against
the last sample and the errors seen. Memory that grows with the calls made is a leak; a flat
line after warm-up is the goal.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import children, fsmcp_params, session  # noqa: E402


def sample(pid: int) -> tuple[int, int, int]:
    """RSS in KiB, open descriptors and threads of process ``pid``."""
    rss = threads = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, len(list(Path(f"/proc/{pid}/fd").iterdir())), threads


def calls(root: Path, rng: random.Random) -> tuple[str, dict]:
    name = f"f{rng.randrange(200):03}.txt"
    kind = rng.randrange(10)
    if kind == 0:
        return "write_file", {"path": name, "content": f"line {rng.random()}\n" * rng.randrange(1, 200)}
    if kind == 1:
        return "append_file", {"path": name, "content": "more\n", "create": True}
    if kind == 2:
        return "edit_file", {"path": "edit.txt", "edits": [{"oldText": "beta", "newText": "beta"}]}
    if kind == 3:
        return "grep_files", {"pattern": "line 0\\.1", "directory": str(root)}
    if kind == 4:
        return "list_directory", {"path": str(root)}
    if kind == 5:
        return "search_files", {"pattern": "f1*", "directory": str(root)}
    if kind == 6:
        return "read_file", {"path": "missing.txt"}  # an error, every time
    if kind == 7:
        return "list_changes", {}
    return "read_file", {"path": "edit.txt"}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--every", type=float, default=30)
    args = parser.parse_args()
    top = Path(tempfile.mkdtemp(prefix="fsmcp-soak-"))
    root = top / "root"
    root.mkdir()
    (root / "edit.txt").write_text("alpha\n" * 100 + "beta\n")
    rng = random.Random(7)
    done = errors = 0
    kinds: set[str] = set()
    before = children()
    try:
        async with session(fsmcp_params(str(root), "--journal", str(top / "journal"))) as client:
            (pid,) = children() - before
            start = time.monotonic()
            end = start + args.minutes * 60
            samples: list[tuple[float, int, int, int, int]] = []

            async def worker() -> None:
                nonlocal done, errors
                while time.monotonic() < end:
                    name, arguments = calls(root, rng)
                    result = await client.call_tool(name, arguments)
                    done += 1
                    if result.is_error and not (name == "read_file" and arguments["path"] == "missing.txt"):
                        errors += 1
                        kinds.add(f"{name}: {result.content[0].text[:100]}")

            async def sampler() -> None:
                print(f"{'seconds':>8} {'calls':>8} {'RSS MB':>8} {'fds':>5} {'threads':>8}")
                while time.monotonic() < end + args.every:
                    rss, fds, threads = sample(pid)
                    samples.append((time.monotonic() - start, done, rss, fds, threads))
                    print(f"{samples[-1][0]:8.0f} {done:8d} {rss / 1024:8.1f} {fds:5d} {threads:8d}", flush=True)
                    await anyio.sleep(args.every)

            async with anyio.create_task_group() as tg:
                tg.start_soon(sampler)
                for _ in range(args.in_flight):
                    tg.start_soon(worker)
            warm = samples[min(2, len(samples) - 1)]
            last = samples[-1]
            print(f"calls {done:,}, unexpected errors {errors}; RSS after warm-up {warm[2] / 1024:.1f} MB, "
                  f"at the end {last[2] / 1024:.1f} MB ({(last[2] - warm[2]) / 1024:+.1f} MB); "
                  f"fds {warm[3]} → {last[3]}, threads {warm[4]} → {last[4]}")  # fmt: skip
            for kind in sorted({k.split(":")[0] + ":" + k.split(":")[1] for k in kinds})[:10]:
                print("  error:", kind)
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    anyio.run(main)
