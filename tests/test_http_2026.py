"""The 2026-07-28 protocol over HTTP: stateless requests, answered by any process of one state directory.

Real servers (``fsmcp serve --transport http``, forked processes on loopback ports), the SDK's own
client in ``mode="2026-07-28"``, and raw JSON-RPC over ``httpx2`` for what no SDK would send. Two
servers over one tree and one state directory stand for two workers or two replicas: one client's
requests alternate between them, request by request (:class:`Alternating`).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

from fsmcp.serve.request_state import KEY_NAME, RequestStates, StateRefused, http_state_dir
from fsmcp.paths.consent import Consent
from fsmcp.testing import forked, http_url, processes_with, text_of

TOKEN = "a-2026-token-of-some-length"
WORKSPACE = "io.github.fsmcp/workspace"
VERSION = "2026-07-28"
SECRET = "API_KEY=only-if-the-user-says-so\n"
MARK = "only-if-the-user-says-so"
NOTEBOOK = {
    "cells": [{"cell_type": "code", "source": ["print('hi')\n"], "metadata": {}, "outputs": [], "execution_count": None}],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    stderr: Path

    @property
    def port(self) -> int:
        return httpx2.URL(self.url).port  # type: ignore[return-value]


@contextmanager
def servers(tmp_path: Path, root: Path, count: int, *, env: dict[str, str] | None = None, extra: tuple[str, ...] = ()) -> Iterator[list[Server]]:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    started: list[Server] = []
    try:
        for n in range(count):
            errors = tmp_path / f"stderr{n}.txt"
            with errors.open("wb") as sink:
                process = subprocess.Popen(
                    forked("serve", "--transport", "http", "--port", "0", "--token-file", str(token_file), *extra, str(root), pid_file=tmp_path / f"pid{n}"),
                    cwd=tmp_path,
                    env={**os.environ, **(env or {})},
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=sink,
                )
            started.append(Server("", process, errors))
        for server in started:
            server.url = http_url(server.process, server.stderr)
        yield started
    finally:
        for server in started:
            server.process.terminate()
        for server in started:
            server.process.wait(timeout=30)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    proj = root / "proj"
    proj.mkdir(parents=True)
    (proj / "inside.txt").write_text("in proj\n")
    (proj / "code.py").write_text("def greet():\n    return 'hi'\n\n\nclass Box:\n    pass\n")
    (proj / "book.ipynb").write_text(json.dumps(NOTEBOOK))
    (proj / ".env").write_text(SECRET)
    (root / "top.txt").write_text("at the top\n")
    return root.resolve()


class Alternating(httpx2.AsyncBaseTransport):
    """Sends each request to the next server in turn (its port and ``Host``): a load balancer
    with no affinity at all. ``ports`` records where each request went."""

    def __init__(self, servers: list[Server], *, fresh: bool = False):
        self.servers = servers
        # fresh: a new connection for every request, so that any of a server's workers may take it.
        self.inner = httpx2.AsyncHTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0)) if fresh else httpx2.AsyncHTTPTransport()
        self.ports: list[int] = []
        self.methods: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        server = self.servers[len(self.ports) % len(self.servers)]
        request.url = request.url.copy_with(port=server.port)
        request.headers["host"] = f"127.0.0.1:{server.port}"
        self.ports.append(server.port)
        self.methods.append(request.headers.get("mcp-method", ""))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class User:
    """Answers each consent question from ``answers``, in order, and records the questions."""

    answers: list[str]
    asked: list[str] = field(default_factory=list)

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": self.answers.pop(0)})


@asynccontextmanager
async def modern(servers: list[Server], *, fresh: bool = False, **options: Any) -> AsyncIterator[tuple[Client, Alternating]]:
    transport = Alternating(servers, fresh=fresh)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, transport=transport, timeout=60)
    async with http, Client(streamable_http_client(servers[0].url, http_client=http), mode=VERSION, **options) as client:
        yield client, transport


def raw(server: Server, method: str, params: dict[str, Any], *, id_: Any = 1, headers: dict[str, str] | None = None, capabilities: dict[str, Any] | None = None) -> httpx2.Response:
    meta = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": capabilities or {}, **params.pop("_meta", {})}
    body = {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}
    sent = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
        **({"Mcp-Name": params["name"]} if "name" in params else {}),
        **(headers or {}),
    }
    return httpx2.post(server.url, json=body, headers={k: v for k, v in sent.items() if v is not None}, timeout=60)


# -- one client, any process ---------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("count", "workers"), [(1, 1), (2, 1), (1, 2)], ids=["one-process", "two-processes-alternating", "two-workers-any-connection"]
)
async def test_a_2026_client_calls_every_tool_family_keeps_its_workspace_and_answers_a_consent_question(tmp_path, tree, count, workers):
    user = User(["allow_once"])
    with servers(tmp_path, tree, count, extra=("--workers", str(workers))) as running:
        async with modern(running, fresh=workers > 1, elicitation_callback=user) as (client, transport):
            assert client.protocol_version == VERSION
            moved = await client.call_tool("set_workspace", {"path": "proj"})
            handle = (moved.meta or {}).get(WORKSPACE)
            kept = {WORKSPACE: handle}

            async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                result = await client.call_tool(name, arguments, meta=kept)
                assert not result.is_error, f"{name}: {text_of(result)}"
                assert (result.meta or {}).get(WORKSPACE) == handle  # the handle comes back with every answer
                return result

            results = {
                "read": await call("read_file", {"path": "inside.txt"}),
                "write": await call("write_file", {"path": "made.txt", "content": "one\ntwo\n"}),
                "edit": await call("edit_file", {"path": "made.txt", "edits": [{"oldText": "two", "newText": "three"}]}),
                "patch": await call("patch_apply", {"patch": "--- a/made.txt\n+++ b/made.txt\n@@ -1,2 +1,2 @@\n-one\n+uno\n three\n"}),
                "notebook": await call("read_notebook", {"path": "book.ipynb"}),
                "outline": await call("outline", {"path": "code.py"}),
                "search": await call("grep_files", {"regex": "uno", "directory": "."}),
                "archive": await call("compress_files", {"paths": ["made.txt"], "output": "made.zip"}),
                "batch": await call("batch_operations", {"operations": [{"type": "append", "arguments": {"path": "made.txt", "content": "four\n"}}, {"type": "read", "arguments": {"path": "made.txt"}}]}),
                "shell": await call("run_command", {"command": "cat", "args": ["made.txt"]}),
                "watch": await call("watch_file", {"path": "made.txt"}),
                "history": await call("list_changes", {"path": "made.txt"}),
            }
            # A consent question over the protocol's input_required round: the retry carries the
            # answer and the sealed state, and lands on the other process when there are two.
            before = len(transport.ports)
            secret = await client.call_tool("read_file", {"path": ".env"}, meta=kept)
            rounds = transport.ports[before:]
            # Without the handle, the next call resolves from the first root again: nothing was kept.
            forgotten = await client.call_tool("read_file", {"path": "inside.txt"})
    assert handle == str(tree / "proj")
    assert text_of(results["read"]) == "in proj\n"
    assert (tree / "proj" / "made.txt").read_text() == "uno\nthree\nfour\n"
    assert "print('hi')" in text_of(results["notebook"])
    assert "greet" in text_of(results["outline"]) and "Box" in text_of(results["outline"])
    assert "made.txt" in text_of(results["search"])
    assert (tree / "proj" / "made.zip").is_file()
    assert "uno\nthree\nfour\n" in text_of(results["shell"])
    assert "made.txt" in text_of(results["history"])
    assert not secret.is_error and SECRET in text_of(secret)
    assert user.asked == [f"The agent wants to read {tree / 'proj' / '.env'}. Allow it this once, or deny?"] and user.answers == []
    assert len(rounds) == 2
    if count == 2:
        assert rounds[0] != rounds[1], "the consent's retry should have reached the other process"
        assert set(transport.ports) == {s.port for s in running}
    assert forgotten.is_error and text_of(forgotten).startswith("NOT_FOUND: ")


@pytest.mark.anyio
async def test_the_handshake_eras_keep_their_sessions_beside_2026(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        async with http, Client(streamable_http_client(server.url, http_client=http), mode="legacy") as legacy:
            moved = await legacy.call_tool("set_workspace", {"path": "proj"})
            again = await legacy.call_tool("read_file", {"path": "inside.txt"})
            version = legacy.protocol_version
        async with modern([server]) as (client, _):
            auto = await client.call_tool("read_file", {"path": "top.txt"})
    assert version == "2025-11-25" and not moved.is_error
    assert text_of(again) == "in proj\n"  # the session kept the workspace, as before
    assert text_of(auto) == "at the top\n"  # and a 2026-07-28 client never saw it


# -- the requestState: sealed, tied to its call, once only ----------------------------------------


def _asked(server: Server, path: str = "proj/.env") -> tuple[dict[str, Any], dict[str, Any]]:
    params = {"name": "read_file", "arguments": {"path": path}}
    first = raw(server, "tools/call", dict(params), capabilities={"elicitation": {}}).json()["result"]
    assert first["resultType"] == "input_required", first
    return params, first


def _answer(server: Server, params: dict[str, Any], state: Any, answer: str = "allow_once") -> dict[str, Any]:
    responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": answer}}}
    return raw(server, "tools/call", {**params, "inputResponses": responses, "requestState": state}, capabilities={"elicitation": {}}).json()


def test_a_forged_or_altered_request_state_is_refused_and_reads_nothing(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        params, first = _asked(server)
        state = first["requestState"]
        payload, mac = state.split(".")
        body = json.loads(_b64(payload))
        body["consent"]["allowed"] = {str(tree / "proj" / ".env"): body["consent"]["found"][str(tree / "proj" / ".env")]}
        body["consent"]["waiting"] = {}
        forged_payload = _b64e(json.dumps(body).encode())
        attempts = {
            "made up": "not-a-state",
            "allowed added, old seal": f"{forged_payload}.{mac}",
            "seal of another": f"{payload}.{'A' * len(mac)}",
        }
        answers = {why: _answer(server, params, state) for why, state in attempts.items()}
        honest = _answer(server, params, state)
    for why, answer in answers.items():
        assert answer["error"]["code"] == types.INVALID_PARAMS, why
        assert answer["error"]["data"] == {"requestState": "forged"}, why
        assert "not one this server made" in answer["error"]["message"] and "call the tool again" in answer["error"]["message"]
        assert MARK not in json.dumps(answer)
    assert MARK in json.dumps(honest["result"])  # the honest round still works after the forgeries


def test_a_request_state_counts_once_even_on_another_process(tmp_path, tree):
    with servers(tmp_path, tree, 2) as (one, other):
        params, first = _asked(one)
        served = _answer(other, params, first["requestState"])
        replayed = _answer(one, params, first["requestState"])
        replayed_there = _answer(other, params, first["requestState"])
    assert MARK in json.dumps(served["result"])
    for answer in (replayed, replayed_there):
        assert answer["error"]["code"] == types.INVALID_PARAMS
        assert answer["error"]["data"] == {"requestState": "spent"}
        assert MARK not in json.dumps(answer)


def test_a_request_state_is_tied_to_its_call(tmp_path, tree):
    (tree / "proj" / "other.txt").write_text("other\n")
    with servers(tmp_path, tree, 1) as (server,):
        _, first = _asked(server)
        elsewhere = _answer(server, {"name": "read_file", "arguments": {"path": "proj/other.txt"}}, first["requestState"])
    assert elsewhere["error"]["data"] == {"requestState": "other-call"}


def test_a_server_of_another_state_directory_cannot_read_the_state(tmp_path, tree):
    apart = tmp_path / "apart"
    apart.mkdir(mode=0o700)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with servers(tmp_path / "a", tree, 1) as (one,), servers(tmp_path / "b", tree, 1, env={"XDG_STATE_HOME": str(apart)}) as (other,):
        params, first = _asked(one)
        answer = _answer(other, params, first["requestState"])
    assert answer["error"]["data"] == {"requestState": "forged"}
    assert "share one state directory" in answer["error"]["message"]


def test_the_key_is_private_and_shared_by_the_processes_of_one_state_directory(tmp_path):
    first, second = RequestStates(), RequestStates()
    key = http_state_dir() / KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    sealed = first.seal("read_file", {"path": "x"}, Consent(5.0), None, 5.0)
    assert second.open(sealed, "read_file", {"path": "x"}).roots is None
    key.chmod(0o644)
    with pytest.raises(ValueError, match="open to other users"):
        RequestStates()


def test_an_expired_request_state_is_refused(tmp_path):
    states = RequestStates(ttl=0)  # expired as soon as it is made
    sealed = states.seal("read_file", {"path": "x"}, Consent(5.0), None, 5.0)
    with pytest.raises(StateRefused) as refused:
        states.open(sealed, "read_file", {"path": "x"})
    assert refused.value.why == "expired" and "call the tool again" in refused.value.message


# -- the workspace handle ----------------------------------------------------------------------


def test_a_workspace_handle_outside_the_roots_is_refused(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        outside = raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "passwd"}, "_meta": {WORKSPACE: "/etc"}}).json()
        missing = raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "x"}, "_meta": {WORKSPACE: str(tree / "gone")}}).json()
        not_text = raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "x"}, "_meta": {WORKSPACE: 7}}).json()
    assert outside["error"]["code"] == types.INVALID_PARAMS
    assert "ACCESS_DENIED" in outside["error"]["message"] and "call set_workspace again" in outside["error"]["message"]
    assert "NOT_FOUND" in missing["error"]["message"]
    assert not_text["error"]["code"] == types.INVALID_PARAMS


def test_require_workspace_is_met_by_the_handle(tmp_path, tree):
    with servers(tmp_path, tree, 2, extra=("--require-workspace",)) as (one, other):
        refused = raw(one, "tools/call", {"name": "read_file", "arguments": {"path": "inside.txt"}}).json()
        moved = raw(one, "tools/call", {"name": "set_workspace", "arguments": {"path": "proj"}}).json()
        handle = moved["result"]["_meta"][WORKSPACE]
        kept = raw(other, "tools/call", {"name": "read_file", "arguments": {"path": "inside.txt"}, "_meta": {WORKSPACE: handle}}).json()
    assert refused["result"]["isError"] and "no workspace is set" in refused["result"]["content"][0]["text"]
    assert kept["result"]["content"][0]["text"] == "in proj\n"


# -- what the gate and the transport refuse -----------------------------------------------------


def test_a_2026_request_passes_the_same_gate(tmp_path, tree):
    (tmp_path / "fsmcp.toml").write_text("max_file_bytes = 1024\n")  # a body limit of 1 MiB and 6 KiB
    with servers(tmp_path, tree, 1, extra=("--config", str(tmp_path / "fsmcp.toml"))) as (server,):
        no_token = raw(server, "server/discover", {}, headers={"Authorization": None})  # type: ignore[dict-item]
        wrong = raw(server, "server/discover", {}, headers={"Authorization": "Bearer nope"})
        foreign = raw(server, "server/discover", {}, headers={"Origin": "http://evil.example"})
        rebound = raw(server, "server/discover", {}, headers={"Host": "evil.example"})
        big = httpx2.post(server.url, content=b'{"a":"' + b"x" * (2 << 20) + b'"}', headers={"Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": VERSION}, timeout=60)
        found = raw(server, "server/discover", {})
    assert (no_token.status_code, wrong.status_code, foreign.status_code, rebound.status_code, big.status_code) == (401, 401, 403, 421, 413)
    assert found.status_code == 200 and found.json()["result"]["supportedVersions"] == [VERSION]


def test_what_a_2026_request_may_not_say(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        mismatch = raw(server, "tools/list", {}, headers={"Mcp-Method": "tools/call"})
        wrong_name = raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "top.txt"}}, headers={"Mcp-Name": "write_file"})
        with_session = raw(server, "tools/list", {}, headers={"Mcp-Session-Id": "abc"})
        unenveloped = httpx2.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}},
            headers={"Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/list", "Accept": "application/json"},
            timeout=60,
        )
        batch = httpx2.post(server.url, json=[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], headers={"Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": VERSION}, timeout=60)
        unknown = httpx2.post(server.url, json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, headers={"Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": "2099-01-01"}, timeout=60)
        initialize = raw(server, "initialize", {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}})
        ping = raw(server, "ping", {})
        unknown_tool = raw(server, "tools/call", {"name": "no_such_tool", "arguments": {}}, capabilities={"roots": {}})
        notified = httpx2.post(
            server.url,
            json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}}},
            headers={"Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": VERSION, "Mcp-Method": "notifications/cancelled"},
            timeout=60,
        )
    assert mismatch.json()["error"]["code"] == types.HEADER_MISMATCH
    assert wrong_name.json()["error"]["code"] == types.HEADER_MISMATCH
    assert "no Mcp-Session-Id" in with_session.json()["error"]["message"]
    assert unenveloped.json()["error"]["code"] == types.INVALID_PARAMS and "envelope" in unenveloped.json()["error"]["message"]
    assert batch.json()["error"]["code"] == types.INVALID_REQUEST
    assert unknown.json()["error"]["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
    assert unknown.json()["error"]["data"]["supported"] == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", VERSION]
    assert notified.status_code == 202
    # Errors carry the HTTP status the revision gives their code: 404 for a method not served.
    assert (initialize.status_code, initialize.json()["error"]["code"]) == (404, types.METHOD_NOT_FOUND)
    assert "server/discover" in initialize.json()["error"]["message"]
    assert (ping.status_code, ping.json()["error"]["code"]) == (404, types.METHOD_NOT_FOUND)
    assert (mismatch.status_code, batch.status_code, unknown.status_code) == (400, 400, 400)
    # A tool not offered is answered at once, without first asking a roots-offering client for its roots.
    assert unknown_tool.json()["result"]["resultType"] == "complete" and unknown_tool.json()["result"]["isError"]


def test_an_answer_streams_when_the_client_accepts_events_and_asks_for_progress(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        streamed = raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "top.txt"}, "_meta": {"progressToken": "p1"}})
        plain = raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "top.txt"}, "_meta": {"progressToken": "p1"}}, headers={"Accept": "application/json"})
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[len("data: "):]) for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events[-1]["id"] == 1 and events[-1]["result"]["content"][0]["text"] == "at the top\n"
    assert all(event.get("method") == "notifications/progress" for event in events[:-1])
    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["result"]["content"][0]["text"] == "at the top\n"


def test_the_roots_round_and_a_consent_round_travel_together(tmp_path, tree):
    """A client offering roots is asked for them first; the consent round that follows carries
    them in its sealed state, so that its retry (on another process) needs no third round."""
    with servers(tmp_path, tree, 2) as (one, other):
        capabilities = {"elicitation": {}, "roots": {}}
        params = {"name": "read_file", "arguments": {"path": str(tree / "proj" / ".env")}}
        roots = raw(one, "tools/call", dict(params), capabilities=capabilities).json()["result"]
        listed = {"roots": {"roots": [{"uri": (tree / "proj").as_uri()}]}}
        asked = raw(other, "tools/call", {**params, "inputResponses": listed}, capabilities=capabilities).json()["result"]
        responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}
        done = raw(one, "tools/call", {**params, "inputResponses": responses, "requestState": asked["requestState"]}, capabilities=capabilities).json()["result"]
        top = raw(other, "tools/call", {"name": "read_file", "arguments": {"path": str(tree / "top.txt")}, "inputResponses": listed}, capabilities=capabilities).json()["result"]
    assert roots["resultType"] == "input_required" and list(roots["inputRequests"]) == ["roots"]
    assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["fsmcp.ask.0"]
    assert done["resultType"] == "complete" and SECRET in done["content"][0]["text"]
    assert top["isError"] and top["content"][0]["text"].startswith("ACCESS_DENIED: ")  # the roots narrowed that call


def _b64(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64e(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()



def test_progress_streams_while_the_call_runs(tmp_path, tree):
    """The progress notifications (one a second of a program's run) come on the event stream
    before the answer: the program runs for 3 s of the wall clock at least, however loaded the
    machine (gawk's systime())."""
    runs = ["BEGIN { start = systime(); while (systime() - start < 3) {} print \"stopped\" }"]
    with servers(tmp_path, tree, 1) as (server,):
        body = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {
                "name": "run_command",
                "arguments": {"command": "awk", "args": runs, "timeout": 60},
                "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": "p5"},
            },
        }
        headers = {
            "Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": VERSION,
            "Mcp-Method": "tools/call", "Mcp-Name": "run_command",
        }
        events = []
        with httpx2.stream("POST", server.url, json=body, headers=headers, timeout=600) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[len("data: "):]))
    progress, answer = events[:-1], events[-1]
    assert progress and progress[0]["method"] == "notifications/progress" and progress[0]["params"]["progressToken"] == "p5"
    assert answer["id"] == 5 and "stopped" in answer["result"]["content"][0]["text"], answer


def test_a_key_open_to_other_users_stops_the_start_saying_what_to_do(tmp_path, tree):
    state = tmp_path / "state"
    (state / "fsmcp" / "http").mkdir(parents=True, mode=0o700)
    key = state / "fsmcp" / "http" / KEY_NAME
    key.write_bytes(os.urandom(32))
    key.chmod(0o644)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    done = subprocess.run(
        forked("serve", "--transport", "http", "--port", "0", "--token-file", str(token_file), str(tree)),
        cwd=tmp_path, env={**os.environ, "XDG_STATE_HOME": str(state)}, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("fsmcp: error: cannot keep the 2026-07-28 request states: ") and "open to other users" in done.stderr
    assert "Traceback" not in done.stderr


# -- tasks over HTTP ------------------------------------------------------------------------------

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def _task(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = raw(server, method, params, capabilities=TASKS).json()
    assert "result" in answer, answer
    return answer["result"]


def test_a_task_over_http_is_answered_at_once_polled_and_cancelled_on_the_other_process(tmp_path, tree):
    """The POST that starts a long call answers with the task while the program runs; the other
    process polls it and cancels it (the program gone); another task completes, its result read."""
    config = tmp_path / "tasks.toml"
    config.write_text("[plugins.shell]\nallow = [\"sleep\", \"cat\"]\n")
    with servers(tmp_path, tree, 2, extra=("--config", str(config))) as (one, other):
        started = _task(one, "tools/call", {"name": "run_command", "arguments": {"command": "sleep", "args": ["417"], "timeout": 55}})
        assert started["resultType"] == "task" and started["status"] == "working"
        task = started["taskId"]
        # Answered while the program runs: the task reads working on the other process.
        polled = _task(other, "tasks/get", {"taskId": task})
        assert polled["status"] == "working", polled.get("result")
        for _ in range(2400):  # the program starts after the answer: wait for it
            if processes_with("417"):
                break
            time.sleep(0.05)
        assert processes_with("417")
        _task(other, "tasks/cancel", {"taskId": task})
        for _ in range(2400):  # by count, not time: a loaded machine takes longer, never forever
            status = _task(one, "tasks/get", {"taskId": task})["status"]
            if status != "working":
                break
            time.sleep(0.05)
        assert status == "cancelled"
        for _ in range(2400):
            if not processes_with("417"):
                break
            time.sleep(0.05)
        assert not processes_with("417")
        done = _task(one, "tools/call", {"name": "run_command", "arguments": {"command": "cat", "args": ["top.txt"]}})
        for _ in range(2400):
            got = _task(other, "tasks/get", {"taskId": done["taskId"]})
            if got["status"] != "working":
                break
            time.sleep(0.05)
        assert got["status"] == "completed" and "at the top" in got["result"]["content"][0]["text"]
