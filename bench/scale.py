"""Scale benchmark, run only when asked for (``bench/all.py scale``): what big trees and files cost.

Builds, once, under ``bench/.fixtures/scale``: a tree of 200,000 files, a 1 GiB text file and a
200 MB text file (about 2 minutes and 1.3 GB of disk). Prints, with each server's peak memory:
a recursive ``list_directory`` capped at 1,000 entries over the tree; a line range deep in the
1 GiB file, the first time and again (another range of the same file); one ``edit_file`` in the
200 MB file beside DesktopCommander's ``edit_block`` (installed into ``bench/.dc`` from the npm
registry when npm can; the row is left out when it cannot). Every timed edit is made in a fresh
server, so its peak memory is that edit's. Run: ``uv run python bench/scale.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import StdioServerParameters

from common import BENCH, children, fsmcp_params, median, print_table, ratio, server_rss_peak_kib, session

FIXTURES = BENCH / ".fixtures" / "scale"
SEED = 1124
TREE_FILES = 200_000
BIG_LINES = 21_500_000  # 50 bytes a line: 1 GiB
EDIT_LINES = 4_200_000  # 200 MB
DC_DIR = BENCH / ".dc"
DC_PACKAGE = "@wonderwhy-er/desktop-commander"
DC_ENTRY = DC_DIR / "node_modules" / DC_PACKAGE / "dist" / "index.js"
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]


def line(n: int, rng: random.Random) -> str:
    """50 bytes: a unique number, then words."""
    return f"{n:09} {' '.join(rng.choices(WORDS, k=7))[:39]:<39}\n"


def write_lines(path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for start in range(0, count, 100_000):
            out.write("".join(line(n, rng) for n in range(start, min(start + 100_000, count))))


def build() -> None:
    done = FIXTURES / f".done-{SEED}"
    if done.exists():
        return
    print(f"bench: building scale fixtures under {FIXTURES} (once, a few minutes) ...", file=sys.stderr)
    tree = FIXTURES / "tree"
    for d in range(TREE_FILES // 500):
        sub = tree / f"area{d // 20:02}" / f"part{d % 20:02}"
        sub.mkdir(parents=True, exist_ok=True)
        for f in range(500):
            (sub / f"f{f:03}.txt").write_bytes(b"x\n")
    write_lines(FIXTURES / "big.txt", BIG_LINES, SEED)
    write_lines(FIXTURES / "edit.txt", EDIT_LINES, SEED + 1)
    done.write_text("ok")


def ensure_desktop_commander() -> Path | None:
    """DesktopCommander's entry script, installed when missing; None when npm cannot install it."""
    if not DC_ENTRY.exists() and shutil.which("npm"):
        print(f"bench: installing {DC_PACKAGE} into {DC_DIR} ...", file=sys.stderr)
        # Its install scripts download a browser it needs for other tools; the edit needs none.
        env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1"}
        subprocess.run(["npm", "install", "--silent", "--ignore-scripts", "--prefix", str(DC_DIR), DC_PACKAGE], env=env, check=False)
    return DC_ENTRY if DC_ENTRY.exists() else None


def dc_params(home: Path) -> StdioServerParameters:
    # Its settings live in the home directory: a private one, telemetry off, every directory allowed.
    config = home / ".claude-server-commander" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"telemetryEnabled": False, "allowedDirectories": []}))
    return StdioServerParameters(command="node", args=[str(DC_ENTRY)], env={**os.environ, "HOME": str(home)})


def dc_version() -> str:
    return json.loads((DC_ENTRY.parent.parent / "package.json").read_text())["version"]


def mib(kib: int) -> str:
    return f"{kib / 1024:,.0f} MiB"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


async def listing(runs: int) -> tuple[float, int, str]:
    before = children()
    async with session(fsmcp_params(str(FIXTURES))) as client:
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            result = await client.call_tool("list_directory", {"path": str(FIXTURES / "tree"), "recursive": True, "maxEntries": 1000})
            samples.append(time.perf_counter() - t)
        notice = result.content[0].text.rsplit("\n", 1)[-1]
        return median(samples), server_rss_peak_kib(before), notice


async def deep_ranges(runs: int) -> tuple[float, float, int]:
    """Seconds of the first deep line range, the median of the next ones, and the peak memory."""
    before = children()
    rng = random.Random(SEED)
    async with session(fsmcp_params(str(FIXTURES))) as client:

        async def read(start: int) -> float:
            t = time.perf_counter()
            result = await client.call_tool("read_file", {"path": str(FIXTURES / "big.txt"), "startLine": start, "endLine": start + 49})
            elapsed = time.perf_counter() - t
            if result.is_error or not result.content[0].text.startswith(f"{start - 1:09} "):
                raise SystemExit(f"read_file startLine {start}: unexpected answer {result.content[0].text[:200]!r}")
            return elapsed

        first = await read(20_000_000)
        again = [await read(rng.randrange(10_000_000, BIG_LINES - 100)) for _ in range(runs)]
        return first, median(again), server_rss_peak_kib(before)


async def edits(params: StdioServerParameters, tool: str, words: dict[str, str], runs: int) -> tuple[float, int]:
    """Median seconds of one edit in the 200 MB file, each in a fresh server, and the largest peak memory."""
    path = FIXTURES / "edit.txt"
    target = f"{EDIT_LINES // 2:09} "
    samples, peak = [], 0
    for run in range(runs):
        old, new = (target, target.strip() + "*") if run % 2 == 0 else (target.strip() + "*", target)
        before = children()
        async with session(params) as client:
            t = time.perf_counter()
            result = await client.call_tool(tool, {words["path"]: str(path), **words["change"](old, new)})
            samples.append(time.perf_counter() - t)
            if result.is_error:
                raise SystemExit(f"{tool}: {result.content[0].text[:300]}")
            peak = max(peak, server_rss_peak_kib(before))
    if run % 2 == 0:  # leave the file as it was built
        async with session(params) as client:
            await client.call_tool(tool, {words["path"]: str(path), **words["change"](target.strip() + "*", target)})
    return median(samples), peak


FSMCP_EDIT = {"path": "path", "change": lambda old, new: {"edits": [{"oldText": old, "newText": new}]}}
DC_EDIT = {"path": "file_path", "change": lambda old, new: {"old_string": old, "new_string": new}}


async def main(runs: int) -> None:
    build()
    rows = []
    took, peak, notice = await listing(runs)
    rows.append(("list_directory recursive, maxEntries 1000, 200,000 files", ms(took), "-", "-"))
    rows.append(("  peak memory of the server", mib(peak), "-", "-"))
    first, again, peak = await deep_ranges(runs)
    rows.append(("read_file 50 lines at line 20,000,000 of 1 GiB, first", ms(first), "-", "-"))
    rows.append(("  another deep range of the same file (median)", ms(again), ms(first), ratio(again, first)))
    rows.append(("  peak memory of the server", mib(peak), "-", "-"))
    size = (FIXTURES / "edit.txt").stat().st_size
    with tempfile.TemporaryDirectory(prefix="fsmcp-scale-") as config:
        # The default max_file_bytes (50 MiB) refuses to load a 200 MB file whole.
        (Path(config) / "fsmcp.toml").write_text(f"max_file_bytes = {2 * size}\n")
        ours, ours_peak = await edits(fsmcp_params("--config", f"{config}/fsmcp.toml", str(FIXTURES)), "edit_file", FSMCP_EDIT, runs)
    entry = ensure_desktop_commander()
    if entry is not None:
        with tempfile.TemporaryDirectory(prefix="fsmcp-dc-home-") as home:
            theirs, theirs_peak = await edits(dc_params(Path(home)), "edit_block", DC_EDIT, runs)
        rows.append((f"edit_file, one edit in {size / 1e6:,.0f} MB (DesktopCommander edit_block)", ms(ours), ms(theirs), ratio(ours, theirs)))
        rows.append(("  peak memory of the server", mib(ours_peak), mib(theirs_peak), ratio(ours_peak, theirs_peak)))
    else:
        rows.append((f"edit_file, one edit in {size / 1e6:,.0f} MB (DesktopCommander not installed)", ms(ours), "-", "-"))
        rows.append(("  peak memory of the server", mib(ours_peak), "-", "-"))
    rows.append(("  the same, as a multiple of the file's size", f"{ours_peak * 1024 / size:.1f}x", "", ""))
    baseline = f"DesktopCommander {dc_version()}" if entry is not None else "none installed"
    print_table(f"scale: medians of {runs} runs over stdio; baseline = {baseline}; list_directory's answer ended: {notice}", rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    anyio.run(main, options.runs)
