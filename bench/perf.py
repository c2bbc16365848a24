"""Performance benchmark: fsmcp beside the reference server, in one run, over stdio.

Builds seeded fixtures once under ``bench/.fixtures/perf`` (a 20,000-file tree, a 5 MB text
file, 50 small files) and prints, for both servers, medians of several runs (the servers
taking turns) and the ratio:
the characters per tool of ``tools/list``; cold start to the first ``tools/list`` answer, once
from a fresh install of this tree with ``PYTHONDONTWRITEBYTECODE=1`` (every start a first
start), then with the bytecode compiled (also for a client that tries the 2026-07-28 era
first, which the reference server answers by falling back to ``initialize``, and with no
tool-list cache, as the first start of a configuration is); mean
latency of 500 sequential small ``read_file`` calls and of 500 ``get_file_info`` calls;
calls per second of ``get_file_info`` and ``read_file`` with 64 calls in flight on one session;
mean latency of 20 ``read_multiple_files`` calls of 50 files, and the session's first alone;
``directory_tree`` of the 20,000-file tree (and the characters each returns);
``search_files``; ``edit_file`` on the 5 MB file; peak RSS of each server process; the
raw round trip of a small ``read_file`` and ``get_file_info`` without a client library; and
the per-call and in-flight rows again through the TypeScript SDK's client (``ts_client.mjs``),
whose own cost is small enough that what it measures is the server, with each server's CPU
per call: once in a session's first few thousand calls, once warm, after ``WARM_CALLS`` more
calls of each tool, when V8 has compiled the reference server's hot code.
Run: ``uv run python bench/perf.py [--runs N]`` (``bench/all.py`` runs it with the edit and
search benchmarks).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import types

from common import BENCH, REFERENCE_DIR, children, compile_bytecode, fsmcp_params, median, print_table, ratio, reference_params, reference_version, server_rss_peak_kib, session

FIXTURES = BENCH / ".fixtures" / "perf"
SEED = 1121
TREE_FILES = 20_000


def build() -> None:
    done = FIXTURES / f".done-{SEED}"
    if done.exists():
        return
    print(f"bench: building fixtures under {FIXTURES} (once) ...", file=sys.stderr)
    rng = random.Random(SEED)
    tree = FIXTURES / "tree"
    for d in range(TREE_FILES // 50):
        sub = tree / f"pkg{d // 20:02}" / f"module{d % 20:02}"
        sub.mkdir(parents=True, exist_ok=True)
        for f in range(50):
            (sub / f"file_{f:02}_{rng.randint(0, 9999):04}.py").write_text(f"# file {d}/{f}\n")
    small = FIXTURES / "small"
    small.mkdir(parents=True, exist_ok=True)
    for i in range(50):
        (small / f"note{i:02}.txt").write_text("".join(f"line {n} of note {i}\n" for n in range(40)))
    big = "".join(f"{n:07} {' '.join(rng.choices(['alpha', 'beta', 'gamma', 'delta', 'omega'], k=8))}\n" for n in range(110_000))
    (FIXTURES / "big.txt").write_text(big)
    done.write_text("ok")


def text_len(result: types.CallToolResult) -> int:
    return sum(len(b.text) for b in result.content if isinstance(b, types.TextContent))


# The same question in each server's words: the reference's search_files takes a glob, ours a
# case-insensitive name substring.
SEARCH_ARGS = {
    "fsmcp": lambda root: {"directory": f"{root}/tree", "nameContains": "file_07"},
    "reference": lambda root: {"path": f"{root}/tree", "pattern": "**/*file_07*"},
}


class Figures:
    """One server's samples, run after run, and what else a run saw."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}
        self.chars: dict[str, int] = {}
        self.rss = 0

    def add(self, key: str, value: float) -> None:
        self.samples.setdefault(key, []).append(value)

    def summary(self) -> dict[str, object]:
        return {"times": {k: median(v) for k, v in self.samples.items()}, "chars": self.chars, "rss": self.rss}


async def measure(servers: list[tuple[str, object]], runs: int) -> list[dict[str, object]]:
    """Each server's figures, medians over ``runs`` sessions; the servers take turns run by run,
    so that a machine slower for a while weighs on both alike."""
    figures = [Figures() for _ in servers]
    for _ in range(runs):
        for (name, params), seen in zip(servers, figures):
            await measure_once(name, params, seen)
    return [seen.summary() for seen in figures]


READ_MANY = 20
"""read_multiple_files calls per run: the first in a session also loads the tool."""


async def measure_once(name: str, params, seen: Figures) -> None:
    root = str(FIXTURES)
    small = [f"{root}/small/note{i:02}.txt" for i in range(50)]
    big = f"{root}/big.txt"
    add, chars = seen.add, seen.chars
    before = children()
    async with session(params) as client:
        await client.list_tools()

        t = time.perf_counter()
        for i in range(500):
            await client.call_tool("read_file", {"path": small[i % 50]})
        add("read_file x500 (mean per call)", (time.perf_counter() - t) / 500)

        t, cpu = time.perf_counter(), client_cpu()
        for i in range(500):
            await client.call_tool("get_file_info", {"path": small[i % 50]})
        add("get_file_info x500 (mean per call)", (time.perf_counter() - t) / 500)
        add(CLIENT_CPU, (client_cpu() - cpu) / 500)

        for tool in ("get_file_info", "read_file"):
            rate, busy = await in_flight(client, tool, small)
            add(f"{tool}, {IN_FLIGHT} in flight, calls/s", rate)
            add(f"  the SDK client's CPU meanwhile ({tool}), {BUSY}", busy)

        t = time.perf_counter()
        await client.call_tool("read_multiple_files", {"paths": small})
        first = time.perf_counter() - t
        for _ in range(READ_MANY - 1):
            await client.call_tool("read_multiple_files", {"paths": small})
        add(f"read_multiple_files x{READ_MANY}, 50 files (mean per call)", (time.perf_counter() - t) / READ_MANY)
        add("  the session's first of them", first)

        t = time.perf_counter()
        tree = await client.call_tool("directory_tree", {"path": f"{root}/tree"})
        add("directory_tree, 20,000 files", time.perf_counter() - t)
        chars["directory_tree characters returned"] = text_len(tree) + len(str(tree.structured_content or ""))

        t = time.perf_counter()
        found = await client.call_tool("search_files", SEARCH_ARGS[name](root))
        add("search_files, 20,000 files", time.perf_counter() - t)
        chars["search_files characters returned"] = text_len(found)

        old, new = ("0054321 ", "0054321*") if "0054321 " in Path(big).read_text() else ("0054321*", "0054321 ")
        t = time.perf_counter()
        edited = await client.call_tool("edit_file", {"path": big, "edits": [{"oldText": old, "newText": new}]})
        add("edit_file, 5 MB file", time.perf_counter() - t)
        if edited.is_error:
            raise SystemExit(f"{name}: edit_file failed: {edited.content[0].text[:300]}")
        seen.rss = max(seen.rss, server_rss_peak_kib(before))


IN_FLIGHT = 64
CALLS_IN_FLIGHT = 1280
CLIENT_CPU = "  of which the SDK client's own CPU"
BUSY = "share of one core"
"""Near 100 %, the rate is the client's: one Python process at full speed decoding and checking
the answers; no server can then be measured faster than it."""


def client_cpu() -> float:
    """CPU seconds this process (the SDK client) has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def in_flight(client, tool: str, paths: list[str]) -> tuple[float, float]:
    """Calls per second of ``tool`` with ``IN_FLIGHT`` calls always outstanding on one session,
    and the share of one core the client itself used meanwhile."""
    calls = iter(range(CALLS_IN_FLIGHT))

    async def caller() -> None:
        for i in calls:
            result = await client.call_tool(tool, {"path": paths[i % len(paths)]})
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result.content[0].text[:300]}")

    start, cpu = time.perf_counter(), client_cpu()
    async with anyio.create_task_group() as group:
        for _ in range(IN_FLIGHT):
            group.start_soon(caller)
    elapsed = time.perf_counter() - start
    return CALLS_IN_FLIGHT / elapsed, (client_cpu() - cpu) / elapsed


def tool_chars(params) -> tuple[int, int]:
    """The number of tools and their definitions' characters, as ``tools/list`` sends them."""
    proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=params.env)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    for message in ({"id": 0, "method": "initialize", "params": hello}, {"method": "notifications/initialized"}, {"id": 1, "method": "tools/list"}):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    tools = json.loads(proc.stdout.readline())["result"]["tools"]
    # Closed once answered: a server may end at the end of its input with a request unanswered.
    proc.stdin.close()
    proc.wait()
    # Each definition as json.dumps writes it: what a client forwards to the model, give or take spaces.
    return len(tools), sum(len(json.dumps(tool)) for tool in tools)


def fresh_install(into: Path) -> Path:
    """A copy of this working tree installed as the README installs it (``uv sync``).

    Nothing in the copy has been run, so no bytecode exists but what the install compiled.
    """
    repo = BENCH.parent
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = repo / name
        if source.is_file() and not name.startswith("bench/"):
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"))}
    subprocess.run([sys.executable, "-m", "uv", "sync", "--quiet"], cwd=into, env=env, check=True)
    return into


def no_bytecode_params(project: Path, *serve_args: str, uv_run: bool = False):
    """``fsmcp serve`` of the installed ``project``, by its entry point or as the README starts it (``uv run``)."""
    params = fsmcp_params(*serve_args)
    env = {k: v for k, v in params.env.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if uv_run:
        command, args = sys.executable, ["-m", "uv", "run", "--quiet", "--project", str(project), "fsmcp", "serve", *serve_args]
    else:
        command, args = str(project / ".venv" / "bin" / "python"), params.args
    return params.model_copy(update={"command": command, "args": args, "env": env})


def per_second(rate: float) -> str:
    return f"{rate:,.0f}/s"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.2f} ms" if seconds < 0.01 else f"{seconds * 1000:,.0f} ms"


async def cold_starts(servers: list, starts: int, mode: str = "legacy") -> list[float]:
    """Median seconds from spawning each server to its first ``tools/list`` answer.

    The servers take turns, so that whatever else the machine is doing weighs on both alike.
    """
    samples: list[list[float]] = [[] for _ in servers]
    for _ in range(starts):
        for params, out in zip(servers, samples):
            start = time.perf_counter()
            async with session(params, mode) as client:
                await client.list_tools()
                out.append(time.perf_counter() - start)
    return [median(s) for s in samples]


def round_trips(params, calls: list[tuple[str, dict]], n: int = 2000) -> list[float]:
    """Median seconds of each call's JSON-RPC round trip, written to the pipe by hand.

    Without a client library in between, this is the server's own time per call (the SDK
    client adds about 0.2 ms to each call of the table's other rows, for both servers alike).
    """
    proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def ask(message: dict) -> None:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        if "id" in message:
            proc.stdout.readline()

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    medians = []
    for name, arguments in calls:
        samples = []
        for i in range(n):
            start = time.perf_counter()
            ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
            samples.append(time.perf_counter() - start)
        medians.append(median(samples[n // 10 :]))  # the first tenth warms up
    proc.stdin.close()
    proc.wait()
    return medians


TS_CLIENT = BENCH / "ts_client.mjs"
TS_SDK = REFERENCE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk"
"""The TypeScript SDK, as npm installed it beside the reference server."""


WARM_CALLS = 5_000
"""Calls of each tool in flight after a session's first figures and before its warm ones."""


def ts_client(servers: list, paths: list[str], runs: int) -> list[dict[str, dict[str, dict[str, float]]]]:
    """Each server's figures through ``ts_client.mjs``, by phase and tool: medians of ``runs``
    sessions of each, all the servers in one client that takes every figure of each in turn."""
    given = json.dumps([{"command": [p.command, *p.args], "env": p.env or dict(os.environ)} for p in servers])
    samples: list[list[dict[str, dict[str, dict[str, float]]]]] = [[] for _ in servers]
    for _ in range(runs):
        done = subprocess.run(["node", str(TS_CLIENT), str(TS_SDK), given, json.dumps(paths), str(WARM_CALLS)], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"bench: ts_client.mjs failed: {done.stderr[-600:]}")
        for figures, out in zip(json.loads(done.stdout), samples):
            out.append(figures)
    return [
        {phase: {tool: {key: median([s[phase][tool][key] for s in per]) for key in figures} for tool, figures in tools.items()} for phase, tools in per[0].items()}
        for per in samples
    ]


PHASES = {"first": "", "warm": ", warm"}
"""How a row names the phase of ``ts_client.mjs`` it comes from."""


def ts_rows(ours: dict[str, dict[str, dict[str, float]]], theirs: dict[str, dict[str, dict[str, float]]]) -> list[tuple[str, str, str, str]]:
    rows = []
    for phase, said in PHASES.items():
        for tool in ours[phase]:
            a, b = ours[phase][tool], theirs[phase][tool]
            rows += [
                (f"{tool} per call, TypeScript SDK client{said}", ms(a["perCall"]), ms(b["perCall"]), ratio(a["perCall"], b["perCall"])),
                ("  the server's CPU per call", f"{a['serverCpu'] * 1e6:.0f} µs", f"{b['serverCpu'] * 1e6:.0f} µs", ratio(a["serverCpu"], b["serverCpu"])),
                (f"{tool}, {IN_FLIGHT} in flight, calls/s, TypeScript SDK client{said}", per_second(a["rate"]), per_second(b["rate"]), ratio(a["rate"], b["rate"])),
                ("  the server's CPU per call", f"{a['rateServerCpu'] * 1e6:.0f} µs", f"{b['rateServerCpu'] * 1e6:.0f} µs", ratio(a["rateServerCpu"], b["rateServerCpu"])),
                (f"  the TypeScript client's CPU meanwhile, {BUSY}", f"{a['clientBusy']:.0%}", f"{b['clientBusy']:.0%}", ratio(a["clientBusy"], b["clientBusy"])),
            ]
    return rows


async def main(runs: int, starts: int) -> None:
    build()
    ours_params, theirs_params = fsmcp_params(str(FIXTURES)), reference_params(str(FIXTURES))
    with tempfile.TemporaryDirectory(prefix="fsmcp-install-") as install:
        print("bench: installing a copy of this tree as the README does (uv sync) ...", file=sys.stderr)
        project = fresh_install(Path(install))
        fresh, through_uv = no_bytecode_params(project, str(FIXTURES)), no_bytecode_params(project, str(FIXTURES), uv_run=True)
        fresh_start, through_uv_start, theirs_first = await cold_starts([fresh, through_uv, theirs_params], starts)
    compile_bytecode()
    ours_start, theirs_start = await cold_starts([ours_params, theirs_params], starts)
    # A cache directory inside the served root is never used: every start a first one.
    uncached = ours_params.model_copy(update={"env": {**ours_params.env, "XDG_CACHE_HOME": str(FIXTURES / ".cache")}})
    ours_uncached, theirs_uncached = await cold_starts([uncached, theirs_params], starts)
    ours_auto, theirs_auto = await cold_starts([ours_params, theirs_params], starts, mode="auto")
    (our_tools, our_chars), (their_tools, their_chars) = tool_chars(ours_params), tool_chars(theirs_params)
    ours, theirs = await measure([("fsmcp", ours_params), ("reference", theirs_params)], runs)
    rows = [
        (f"tools/list characters per tool ({our_tools} / {their_tools} tools)", f"{our_chars / our_tools:,.0f}", f"{their_chars / their_tools:,.0f}", ratio(our_chars / our_tools, their_chars / their_tools)),
        ("  all tools' characters", f"{our_chars:,}", f"{their_chars:,}", ratio(our_chars, their_chars)),
        ("cold start, fresh install, no bytecode written", ms(fresh_start), ms(theirs_first), ratio(fresh_start, theirs_first)),
        ("  the same started by uv run (the README's command)", ms(through_uv_start), ms(theirs_first), ratio(through_uv_start, theirs_first)),
        ("cold start to tools/list, bytecode compiled", ms(ours_start), ms(theirs_start), ratio(ours_start, theirs_start)),
        ("  the same, client trying 2026-07-28 first", ms(ours_auto), ms(theirs_auto), ratio(ours_auto, theirs_auto)),
        ("  the same, no tool-list cache (first start)", ms(ours_uncached), ms(theirs_uncached), ratio(ours_uncached, theirs_uncached)),
    ]
    for k, v in ours["times"].items():
        if k.endswith("calls/s"):  # a rate: above 1 is faster
            rows.append((k, per_second(v), per_second(theirs["times"][k]), ratio(v, theirs["times"][k])))
        elif k.endswith(BUSY):
            rows.append((k, f"{v:.0%}", f"{theirs['times'][k]:.0%}", ratio(v, theirs["times"][k])))
        else:
            rows.append((k, ms(v), ms(theirs["times"][k]), ratio(v, theirs["times"][k])))
    small = str(FIXTURES / "small" / "note00.txt")
    calls = [("read_file", {"path": small}), ("get_file_info", {"path": small})]
    for (name, _), mine, reference in zip(calls, round_trips(ours_params, calls), round_trips(theirs_params, calls)):
        rows.append((f"{name}, raw round trip (median)", f"{mine * 1e6:.0f} µs", f"{reference * 1e6:.0f} µs", ratio(mine, reference)))
    paths = [str(FIXTURES / "small" / f"note{i:02}.txt") for i in range(50)]
    rows += ts_rows(*ts_client([ours_params, theirs_params], paths, runs))
    rows += [(k, f"{v:,}", f"{theirs['chars'][k]:,}", ratio(v, theirs["chars"][k])) for k, v in ours["chars"].items()]
    rows.append(("peak RSS of the server", f"{ours['rss'] / 1024:,.1f} MiB", f"{theirs['rss'] / 1024:,.1f} MiB", ratio(ours["rss"], theirs["rss"])))
    title = f"perf: medians over stdio ({starts} alternating cold starts, {runs} runs of the rest; warm: after {WARM_CALLS:,} more calls of each tool); baseline = reference server {reference_version()}"
    print_table(title, rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--starts", type=int, default=15, help="cold starts of each server (default 15)")
    options = parser.parse_args()
    anyio.run(main, options.runs, options.starts)
