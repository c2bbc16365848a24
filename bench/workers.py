"""Throughput over HTTP with worker processes, beside the reference server, in one run.

Calls per second of ``get_file_info`` and ``read_file`` with 64 calls in flight spread over 16
streamable-HTTP sessions of ``fsmcp serve --transport http --workers N`` (N = 1, 2, ... up to
the cores, or as ``--workers`` lists), beside the reference server's one process over its
stdio (64 in flight on its one session), warm (``WARM_CALLS`` calls of each tool first). The
client is the TypeScript SDK's (``http_clients.mjs``), whose own cost is a fraction of the
Python client's; it runs on the same machine, and its share of a core is printed with each
rate: on a machine with few cores, client and servers share them.
Run: ``uv run python bench/workers.py [--workers 1,2] [--warm N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

from common import BENCH, REFERENCE_DIR, STATE, compile_bytecode, ensure_reference_server, print_table, ratio, reference_version

FIXTURES = BENCH / ".fixtures" / "workers"
SDK = REFERENCE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk"
WARM_CALLS = 2000


def build() -> list[str]:
    small = FIXTURES / "small"
    small.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(50):
        path = small / f"note{i:02}.txt"
        if not path.exists():
            path.write_text(f"note {i}\n" + "a line of a small text file\n" * 20)
        paths.append(str(path))
    return paths


def start_fsmcp(workers: int, token: str) -> tuple[subprocess.Popen[bytes], str]:
    errors = FIXTURES / f"stderr-{workers}.txt"
    env = {**os.environ, "XDG_STATE_HOME": str(STATE), "FSMCP_TOKEN": token}
    args = [sys.executable, "-m", "fsmcp", "serve", "--transport", "http", "--port", "0", "--workers", str(workers), str(FIXTURES)]
    with errors.open("wb") as sink:
        process = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink)
    for _ in range(1200):
        found = re.search(r"over HTTP at (http://\S+)", errors.read_text())
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    sys.exit(f"bench: fsmcp --workers {workers} did not start: {errors.read_text()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = len(os.sched_getaffinity(0))
    parser.add_argument("--workers", default=",".join(str(n) for n in range(1, cores + 1)), help="worker counts to measure (default: 1 to the cores)")
    parser.add_argument("--warm", type=int, default=WARM_CALLS, help="calls of each tool before the figures")
    options = parser.parse_args()
    counts = [int(n) for n in options.workers.split(",")]
    paths = build()
    entry = ensure_reference_server()
    compile_bytecode()
    token = secrets.token_urlsafe(24)
    started = [start_fsmcp(n, token) for n in counts]
    try:
        servers = [{"url": url, "token": token, "pid": process.pid} for process, url in started]
        servers.append({"command": ["node", str(entry), str(FIXTURES)], "env": dict(os.environ)})
        out = subprocess.run(
            ["node", str(BENCH / "http_clients.mjs"), str(SDK), json.dumps(servers), json.dumps(paths), str(options.warm)],
            capture_output=True, text=True,
        )
        if out.returncode:
            sys.exit(f"bench: the client failed: {out.stderr[-2000:]}")
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(timeout=60)
    figures = json.loads(out.stdout)
    reference = figures[-1]
    print(f"fsmcp over HTTP, 16 sessions, 64 calls in flight; reference server {reference_version()} over stdio, 64 in flight on its one session; {cores} cores; TypeScript SDK client, warm ({options.warm} calls of each tool first)")
    for tool in ("get_file_info", "read_file"):
        rows = []
        for n, seen in zip(counts, figures):
            ours, theirs = seen[tool], reference[tool]
            rows.append((f"{tool}, workers={n}, calls/s", f"{ours['rate']:,.0f}", f"{theirs['rate']:,.0f}", ratio(ours["rate"], theirs["rate"])))
            rows.append((f"  server CPU per call, workers={n}, ms", f"{ours['serverCpu'] * 1000:.2f}", f"{theirs['serverCpu'] * 1000:.2f}", ratio(ours["serverCpu"], theirs["serverCpu"])))
            rows.append((f"  the client's share of a core, workers={n}", f"{ours['clientBusy']:.0%}", f"{theirs['clientBusy']:.0%}", ""))
        print_table(tool, rows, measured="fsmcp")


if __name__ == "__main__":
    main()
