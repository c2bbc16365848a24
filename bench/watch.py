"""Watch benchmark: how soon a waiting watch_file answers after another process writes a file.

The real server runs over stdio, once per engine (notify through watchfiles, and polling), on
seeded trees of 10, 1,000 and 10,000 entries watched recursively. Each round starts
``watch_file`` with ``waitSeconds``, lets a separate process write one file, and takes the time
from the end of that write (the writer's own clock reading) to the answer. Also measured: the
CPU time the server spends during a wait in which nothing changes.
Run: ``uv run python bench/watch.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio
from common import BENCH, fsmcp_params, median, print_table, ratio, session

SIZES = (10, 1_000, 10_000)
ENGINES = ("notify", "poll")
IDLE_SECONDS = 3.0
WRITER = "import sys, time\nwith open(sys.argv[1], 'w') as fh: fh.write(sys.argv[2])\nprint(time.time())"


def build_tree(entries: int) -> Path:
    """``entries`` files and directories in all: 100 files a directory."""
    tree = BENCH / ".fixtures" / f"watch-{entries}"
    done = tree.with_suffix(".done")
    if not done.exists():
        for n in range(entries * 100 // 101):
            folder = tree / f"dir{n // 100:03}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"file{n}.txt").write_text(f"{n}\n")
        done.write_text("complete\n")
    return tree


def config(engine: str) -> str:
    handle, path = tempfile.mkstemp(suffix=".toml", prefix="fsmcp-bench-watch-")
    os.write(handle, f'[plugins.watch]\nengine = "{engine}"\n'.encode())
    os.close(handle)
    return path


def server_pid(tree: Path) -> int:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            ppid = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        if int(ppid) == os.getpid() and b"serve" in argv and str(tree).encode() in argv:
            return int(entry)
    sys.exit("bench: the fsmcp server process was not found")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def watch(client, tree: Path, wait: float):
    result = await client.call_tool("watch_file", {"path": str(tree), "recursive": True, "waitSeconds": wait})
    if result.is_error:
        sys.exit(f"bench: watch_file failed: {result.content[0].text[:500]}")
    return result


async def latencies(client, tree: Path, runs: int, settle: float) -> list[float]:
    """Seconds from the end of another process's write to watch_file's answer, per round."""
    answered: list[float] = []

    async def waiting() -> None:
        await watch(client, tree, 30)
        answered.append(time.time())

    samples = []
    for n in range(runs):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(settle)  # the server has scanned and is waiting
            target = tree / "dir000" / "file0.txt"
            written = await anyio.run_process([sys.executable, "-c", WRITER, str(target), f"round {n}\n"])
        samples.append(answered[-1] - float(written.stdout))
    return samples


async def idle_share(client, tree: Path, pid: int, settle: float) -> float:
    """The server's CPU share while it waits and nothing changes, its set-up (the scans) left out."""
    shares: list[float] = []

    async def sample() -> None:
        await anyio.sleep(settle)
        cpu, wall = cpu_seconds(pid), time.perf_counter()
        await anyio.sleep(IDLE_SECONDS)
        shares.append((cpu_seconds(pid) - cpu) / (time.perf_counter() - wall))

    async with anyio.create_task_group() as tg:
        tg.start_soon(sample)
        await watch(client, tree, settle + IDLE_SECONDS + 0.5)
    return shares[0]


async def measure(entries: int, engine: str, runs: int) -> tuple[float, float, float]:
    """Median latency, one-shot call time and CPU share while waiting, for one tree and engine."""
    tree = build_tree(entries)
    settings = config(engine)
    try:
        async with session(fsmcp_params(str(tree), "--config", settings, "--enable", "watch")) as client:
            pid = server_pid(tree)
            start = time.perf_counter()
            await watch(client, tree, 0)  # the baseline
            one_shot = time.perf_counter() - start
            settle = 0.3 + 4 * one_shot
            idle = await idle_share(client, tree, pid, settle)
            samples = await latencies(client, tree, runs, settle)
    finally:
        os.unlink(settings)
    return median(samples), one_shot, idle


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


async def main(runs: int) -> None:
    figures = {(entries, engine): await measure(entries, engine, runs) for entries in SIZES for engine in ENGINES}
    rows = []
    for entries in SIZES:
        notify, poll = figures[(entries, "notify")], figures[(entries, "poll")]
        rows.append((f"write -> answer, {entries:,} entries (recursive)", _ms(notify[0]), _ms(poll[0]), ratio(notify[0], poll[0])))
    print_table(f"watch_file waitSeconds, median of {runs} writes by another process: notify (fsmcp) vs polling (baseline)", rows)
    rows = []
    for entries in SIZES:
        notify, poll = figures[(entries, "notify")], figures[(entries, "poll")]
        rows.append((f"CPU while waiting, {entries:,} entries", f"{notify[2]:.1%}", f"{poll[2]:.1%}", ratio(notify[2], poll[2])))
        rows.append((f"one-shot call (a scan), {entries:,} entries", _ms(notify[1]), _ms(poll[1]), ratio(notify[1], poll[1])))
    print_table(f"the server's CPU during a {IDLE_SECONDS:.0f} s wait with no change, and one scan", rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="writes per tree and engine (default 9)")
    anyio.run(main, parser.parse_args().runs)
