"""``fsmcp serve --transport http``: a real subprocess on a loopback port, real HTTP clients.

Raw requests go through ``httpx2`` (the SDK's own HTTP client); MCP sessions through the SDK's
streamable-HTTP client with the bearer header.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

from fsmcp import Access
from fsmcp.builtin.secrets import refusal
from fsmcp.testing import forked, http_url, pid_in, text_of

TOKEN = "correct-horse-battery-staple-42"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
HTTP = ("--transport", "http", "--port", "0")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Served:
    url: str
    pid: int
    root: Path
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text()


def start(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], Path]:
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            forked("serve", *args, pid_file=tmp_path / "server.pid"),
            cwd=tmp_path,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    return process, errors


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    root = tmp_path / "root"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "inside.txt").write_text("in proj\n")
    (root / "top.txt").write_text("at the top\n")
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n")
    token_file.chmod(0o600)
    process, errors = start(tmp_path, *HTTP, str(root), "--token-file", str(token_file))
    try:
        yield Served(http_url(process, errors), pid_in(tmp_path / "server.pid"), root.resolve(), errors)
    finally:
        process.terminate()
        process.wait(timeout=30)


@asynccontextmanager
async def session(served: Served, mode: str = "legacy", **client_options) -> AsyncIterator[Client]:
    """The SDK's client in a session of the handshake era (``mode="auto"`` picks 2026-07-28: tests/test_http_2026.py)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    async with http, Client(streamable_http_client(served.url, http_client=http), mode=mode, **client_options) as client:
        yield client


def post(served: Served, body: object, **headers: str) -> httpx2.Response:
    return httpx2.post(served.url, json=body, headers={**MCP_HEADERS, **headers}, timeout=30)


# -- the token --------------------------------------------------------------------------------


def test_no_token_is_401_and_says_how_to_authenticate(served):
    response = post(served, INITIALIZE)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "mcp-session-id" not in response.headers
    assert "no bearer token" in served.log()


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer", f"Basic {TOKEN}", TOKEN])
def test_a_wrong_token_is_401(served, authorization):
    response = post(served, INITIALIZE, Authorization=authorization)
    assert response.status_code == 401
    assert "mcp-session-id" not in response.headers


def test_every_request_needs_the_token_not_only_the_first(served):
    opened = post(served, INITIALIZE, Authorization=f"Bearer {TOKEN}")
    assert opened.status_code == 200
    session_id = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    assert post(served, listing, **headers).status_code == 401
    assert post(served, listing, **headers, Authorization="Bearer nope").status_code == 401
    assert httpx2.get(served.url, headers=headers, timeout=30).status_code == 401
    assert httpx2.delete(served.url, headers=headers, timeout=30).status_code == 401


@pytest.mark.anyio
async def test_a_tool_call_with_a_wrong_token_writes_nothing(served):
    statuses = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    http = httpx2.AsyncClient(headers={"Authorization": "Bearer wrong"}, event_hooks={"response": [record]}, timeout=30)
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the refusal in an exception group
        async with http, Client(streamable_http_client(served.url, http_client=http)) as client:
            await client.call_tool("write_file", {"path": "planted.txt", "content": "x"})
    assert statuses and set(statuses) == {401}
    # A raw tools/call, as if a session were open, is refused as well.
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "planted.txt", "content": "x"}}}
    headers = {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "0" * 32}
    assert post(served, call, Authorization="Bearer wrong", **headers).status_code == 401
    assert not (served.root / "planted.txt").exists()


# -- the right token ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_with_the_token_tools_list_write_and_read(served):
    async with session(served) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        written = await client.call_tool("write_file", {"path": "new.txt", "content": "over http\n"})
        read = await client.call_tool("read_file", {"path": "new.txt"})
        protocol = client.protocol_version
    assert {"read_file", "write_file", "set_workspace", "list_allowed_directories"} <= listed
    assert not written.is_error, text_of(written)
    assert (served.root / "new.txt").read_text() == "over http\n"
    assert not read.is_error and text_of(read) == "over http\n"
    assert protocol == "2025-11-25"


@pytest.mark.anyio
async def test_the_sdks_client_left_to_choose_speaks_2026_07_28_over_http(served):
    async with session(served, mode="auto") as client:
        read = await client.call_tool("read_file", {"path": "top.txt"})
        protocol = client.protocol_version
    assert protocol == "2026-07-28" and text_of(read) == "at the top\n"


@pytest.mark.anyio
async def test_errors_are_results_over_http_too(served):
    async with session(served) as client:
        missing = await client.call_tool("read_file", {"path": "absent.txt"})
        outside = await client.call_tool("read_file", {"path": "/etc/hostname"})
    assert missing.is_error and text_of(missing).startswith("NOT_FOUND: ")
    assert outside.is_error and text_of(outside).startswith("ACCESS_DENIED: ")


def test_an_unknown_version_is_told_which_versions_are_served(served):
    discover = {"jsonrpc": "2.0", "id": 9, "method": "server/discover", "params": {}}
    response = post(served, discover, Authorization=f"Bearer {TOKEN}", **{"MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 400
    body = response.json()
    assert body["id"] == 9
    assert body["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
    assert body["error"]["data"]["supported"] == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


# -- DNS rebinding ------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1.evil.example", "null"])
def test_a_foreign_origin_is_refused_even_with_the_token(served, origin):
    response = post(served, INITIALIZE, Authorization=f"Bearer {TOKEN}", Origin=origin)
    assert response.status_code == 403
    assert "mcp-session-id" not in response.headers


def test_a_foreign_host_is_refused_even_with_the_token(served):
    response = post(served, INITIALIZE, Authorization=f"Bearer {TOKEN}", Host="evil.example")
    assert response.status_code == 421


def test_a_loopback_origin_is_accepted(served):
    port = served.url.split(":")[2].split("/")[0]
    for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
        assert post(served, INITIALIZE, Authorization=f"Bearer {TOKEN}", Origin=origin).status_code == 200


# -- loopback only ------------------------------------------------------------------------------


def listening_addresses(pid: int) -> list[tuple[str, int]]:
    """The (address, port) of every listening TCP socket the process holds, from /proc."""
    inodes = {
        os.readlink(f"/proc/{pid}/fd/{fd}")[len("socket:[") : -1]
        for fd in os.listdir(f"/proc/{pid}/fd")
        if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")
    }
    found = []
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A: LISTEN
                address, port = local.split(":")
                raw = bytes.fromhex(address)
                # /proc prints each 32-bit word in host (little-endian) order.
                raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.append((socket.inet_ntop(family, raw), int(port, 16)))
    return found


@pytest.mark.skipif(not Path("/proc/self/net/tcp").exists(), reason="needs Linux /proc")
def test_it_listens_on_loopback_only(served):
    port = int(served.url.split(":")[2].split("/")[0])
    assert listening_addresses(served.pid) == [("127.0.0.1", port)]
    assert "which other machines can reach" not in served.log()


def test_a_non_loopback_address_needs_saying_and_is_warned_about(tmp_path):
    process, errors = start(tmp_path, *HTTP, str(tmp_path), "--host", "0.0.0.0", env={"FSMCP_TOKEN": TOKEN})
    try:
        http_url(process, errors)
        assert "warning: listening on 0.0.0.0, which other machines can reach" in errors.read_text()
    finally:
        process.terminate()
        process.wait(timeout=30)


# -- no token, no server ------------------------------------------------------------------------


@pytest.mark.parametrize("setup", ["nothing", "empty file", "missing file", "blank env"])
def test_without_a_token_it_refuses_to_start(tmp_path, setup):
    env = {k: v for k, v in os.environ.items() if k != "FSMCP_TOKEN"}
    args = forked("serve", "--transport", "http", "--port", "0", str(tmp_path))
    if setup == "empty file":
        (tmp_path / "token").write_text("  \n")
        args += ["--token-file", str(tmp_path / "token")]
    elif setup == "missing file":
        args += ["--token-file", str(tmp_path / "absent")]
    elif setup == "blank env":
        env["FSMCP_TOKEN"] = "   "
    done = subprocess.run(args, check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("fsmcp: error: ")
    assert "--token-file" in done.stderr and "FSMCP_TOKEN" in done.stderr


# -- sessions keep their own roots and workspace ------------------------------------------------


@pytest.mark.anyio
async def test_set_workspace_in_one_session_never_reaches_another(served):
    async with session(served) as first, session(served) as second:
        moved = await first.call_tool("set_workspace", {"path": str(served.root / "proj")})
        assert not moved.is_error, text_of(moved)
        in_first = await first.call_tool("read_file", {"path": "inside.txt"})
        in_second = await second.call_tool("read_file", {"path": "inside.txt"})
        top_in_second = await second.call_tool("read_file", {"path": "top.txt"})
    assert text_of(in_first) == "in proj\n"
    assert in_second.is_error and text_of(in_second).startswith("NOT_FOUND: ")
    assert text_of(top_in_second) == "at the top\n"


@pytest.mark.anyio
async def test_one_sessions_client_roots_never_narrow_another(served):
    async def only_proj(ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=(served.root / "proj").as_uri())])

    async with session(served, list_roots_callback=only_proj) as narrowed, session(served) as plain:
        narrowed_dirs = text_of(await narrowed.call_tool("list_allowed_directories", {}))
        plain_dirs = text_of(await plain.call_tool("list_allowed_directories", {}))
        refused = await narrowed.call_tool("read_file", {"path": str(served.root / "top.txt")})
        allowed = await plain.call_tool("read_file", {"path": str(served.root / "top.txt")})
    assert str(served.root / "proj") in narrowed_dirs and f"{served.root} (" not in narrowed_dirs
    assert f"{served.root} (read-write)" in plain_dirs
    assert refused.is_error and text_of(refused).startswith("ACCESS_DENIED: ")
    assert not allowed.is_error


# -- settings from fsmcp.toml -------------------------------------------------------------------


def test_fsmcp_toml_sets_transport_port_token_file_and_more_origins(tmp_path):
    config = tmp_path / "conf"
    config.mkdir()
    (config / "token").write_text(TOKEN)
    (config / "token").chmod(0o600)
    (config / "fsmcp.toml").write_text(
        'transport = "http"\nport = 0\ntoken_file = "token"\nallow_origins = ["https://app.example"]\n'
        'allow_hosts = ["files.example"]\nroots = [".."]\n'
    )
    process, errors = start(tmp_path, "--config", str(config / "fsmcp.toml"), env={"FSMCP_TOKEN": "not this one"})
    try:
        served = Served(http_url(process, errors), pid_in(tmp_path / "server.pid"), tmp_path.resolve(), errors)
        auth = f"Bearer {TOKEN}"
        assert post(served, INITIALIZE, Authorization=auth, Origin="https://app.example").status_code == 200
        assert post(served, INITIALIZE, Authorization=auth, Host="files.example").status_code == 200
        assert post(served, INITIALIZE, Authorization=auth, Origin="https://other.example").status_code == 403
        assert post(served, INITIALIZE, Authorization="Bearer not this one").status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.anyio
async def test_a_refused_read_is_put_to_the_user_over_http_too(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / ".env").write_text("TOKEN=over-http")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    process, errors = start(tmp_path, *HTTP, "--enable", "read", "--token-file", str(token_file), str(root))
    answers = ["allow_once", "deny"]

    async def user(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": answers.pop(0)})

    try:
        served = Served(http_url(process, errors), pid_in(tmp_path / "server.pid"), root, errors)
        async with session(served, elicitation_callback=user) as client:
            allowed = await client.call_tool("read_file", {"path": ".env"})
            denied = await client.call_tool("read_file", {"path": ".env"})
        async with session(served) as client:
            cannot = await client.call_tool("read_file", {"path": ".env"})
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "TOKEN=over-http" in text_of(allowed) and answers == []
    reason = f"ACCESS_DENIED: '.env' is refused: {refusal('.env', Access.READ)}"
    assert text_of(denied) == f"{reason}; the user was asked and declined."
    assert text_of(cannot) == reason
