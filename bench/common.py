"""What every benchmark shares: the two servers, started the same way, and honest statistics.

Each benchmark drives both servers over stdio with the ``mcp`` SDK's own client, so the
figures include the protocol, as a user's client sees them.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import Client, StdioServerParameters

BENCH = Path(__file__).resolve().parent
REFERENCE_DIR = BENCH / ".ref"
REFERENCE_PACKAGE = "@modelcontextprotocol/server-filesystem"
REFERENCE_ENTRY = REFERENCE_DIR / "node_modules" / REFERENCE_PACKAGE / "dist" / "index.js"


def ensure_reference_server() -> Path:
    """The reference server's entry script, installed from the npm registry when missing."""
    if not REFERENCE_ENTRY.exists():
        if shutil.which("npm") is None:
            sys.exit("bench: npm is needed to install the reference server for comparison")
        print(f"bench: installing {REFERENCE_PACKAGE} into {REFERENCE_DIR} ...", file=sys.stderr)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(REFERENCE_DIR), REFERENCE_PACKAGE], check=True)
    return REFERENCE_ENTRY


def compile_bytecode() -> None:
    """Compile every module the server may import, as pip does when it installs a package.

    An interpreter told not to write bytecode (``PYTHONDONTWRITEBYTECODE``), or a source file
    edited since, would otherwise be compiled again at every start, and the cold start would
    measure the compiler.
    """
    import compileall
    import sysconfig

    # The editable installs' source folders, and never the benchmarks' own folder, whose
    # fixtures are 20,000 .py files.
    sources = {p for p in sys.path if p.startswith(str(BENCH.parent)) and not p.startswith(str(BENCH))}
    for directory in {sysconfig.get_paths()["purelib"], *sources}:
        compileall.compile_dir(directory, quiet=1)


def reference_version() -> str:
    import json

    return json.loads((REFERENCE_ENTRY.parent.parent / "package.json").read_text())["version"]


# The journal stays on, as users run it, but keeps the benchmarks' changes out of the user's own
# state directory.
STATE = BENCH / ".state"


def fsmcp_params(*serve_args: str) -> StdioServerParameters:
    env = {**os.environ, "XDG_STATE_HOME": str(STATE)}
    return StdioServerParameters(command=sys.executable, args=["-m", "fsmcp", "serve", *serve_args], env=env)


def reference_params(*roots: str) -> StdioServerParameters:
    return StdioServerParameters(command="node", args=[str(ensure_reference_server()), *roots], env=dict(os.environ))


@asynccontextmanager
async def session(params: StdioServerParameters, mode: str = "legacy") -> AsyncIterator[Client]:
    # Legacy mode by default: the reference server speaks the handshake era only; both are
    # measured alike. "auto" tries the 2026-07-28 era first, and falls back to initialize.
    async with Client(params, mode=mode) as client:
        yield client


async def timed(fn: Callable[[], Awaitable[object]], runs: int) -> list[float]:
    """Wall-clock seconds of ``runs`` calls of ``fn``."""
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - start)
    return out


async def interleaved(contenders: dict[str, list[Callable[[], Awaitable[None]] | None]], runs: int) -> dict[str, list[float]]:
    """Median seconds of every contender, run in turn within each round.

    Taking turns exposes all of them to the same load (other processes on a shared machine);
    one warm-up round first fills the page cache and the servers' imports. A contender that is
    None has no figure.
    """
    samples: dict[str, list[list[float]]] = {what: [[] for _ in fns] for what, fns in contenders.items()}
    for round_ in range(runs + 1):
        for what, fns in contenders.items():
            for i, fn in enumerate(fns):
                if fn is None:
                    continue
                elapsed = await timed(fn, 1)
                if round_:
                    samples[what][i] += elapsed
    return {what: [median(s) if s else float("nan") for s in per] for what, per in samples.items()}


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def ratio(ours: float, theirs: float) -> str:
    if theirs == 0:
        return "n/a"
    return f"{ours / theirs:.2f}x"


def print_table(title: str, rows: list[tuple[str, str, str, str]], measured: str = "fsmcp") -> None:
    """Rows of (what, the measured server, baseline, measured/baseline)."""
    header = ("benchmark", measured, "baseline", "ratio")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    print(f"\n{title}")
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)))


def server_rss_peak_kib(before: set[int]) -> int:
    """VmHWM of the server process this benchmark started (the child not present before)."""
    peak = 0
    for pid in children() - before:
        for proc in [pid, *descendants(pid)]:
            try:
                for line in Path(f"/proc/{proc}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
            except OSError:
                pass
    return peak


def children(pid: int | None = None) -> set[int]:
    pid = pid or os.getpid()
    try:
        return {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


def descendants(pid: int) -> list[int]:
    out = []
    for child in children(pid):
        out += [child, *descendants(child)]
    return out
