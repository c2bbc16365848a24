"""Attacks on the 2026-07-28 protocol over HTTP (issue 32): requestState, workspace handle, _meta, eras, processes."""

from __future__ import annotations

import json
import os

import httpx2
import pytest
from mcp import types

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_http_2026 import MARK, TOKEN, VERSION, WORKSPACE, _answer, _asked, _b64, _b64e, raw, servers, tree  # noqa: F401

ENV_META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": VERSION}


def _clean(response: httpx2.Response) -> dict:
    """Every failure must be a JSON-RPC answer (or a tool error), never a 500 or a traceback."""
    assert response.status_code != 500 and response.status_code < 500, (response.status_code, response.text[:500])
    assert "Traceback" not in response.text, response.text[:2000]
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")][-1]
    body = json.loads(text)
    assert "error" in body or "result" in body, body
    return body


def _post(server, body, headers=None):
    return httpx2.post(server.url, content=json.dumps(body).encode() if not isinstance(body, bytes) else body, headers={**HEADERS, "Content-Type": "application/json", **(headers or {})}, timeout=60)


def test_consent_answer_without_request_state_reads_nothing(tmp_path, tree):
    """Send the user's 'allow_once' straight away, no state: must ask again, not read."""
    with servers(tmp_path, tree, 1) as (server,):
        responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}
        answer = _clean(raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "proj/.env"}, "inputResponses": responses}, capabilities={"elicitation": {}}))
    assert MARK not in json.dumps(answer)


def test_consent_without_elicitation_capability_reads_nothing(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        answer = _clean(raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "proj/.env"}}))
    assert MARK not in json.dumps(answer)


@pytest.mark.parametrize("answer", ["allow_always", "ALLOW_ONCE", "", None, 1, ["allow_once"]])
def test_a_non_enum_answer_reads_nothing(tmp_path, tree, answer):
    with servers(tmp_path, tree, 1) as (server,):
        params, first = _asked(server)
        responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": answer}}}
        got = _clean(raw(server, "tools/call", {**params, "inputResponses": responses, "requestState": first["requestState"]}, capabilities={"elicitation": {}}))
    assert MARK not in json.dumps(got)


def test_deny_then_replay_with_allow_is_refused(tmp_path, tree):
    with servers(tmp_path, tree, 2) as (one, other):
        params, first = _asked(one)
        denied = _answer(one, params, first["requestState"], "deny")
        again = _answer(other, params, first["requestState"], "allow_once")
    assert MARK not in json.dumps(denied) and MARK not in json.dumps(again)
    assert again.get("error", {}).get("data") == {"requestState": "spent"}, again


def test_replay_races_on_two_processes_read_once(tmp_path, tree):
    import concurrent.futures as cf

    with servers(tmp_path, tree, 2) as (one, other):
        params, first = _asked(one)
        with cf.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: _answer((one, other)[i % 2], dict(params), first["requestState"]), range(8)))
    assert sum(MARK in json.dumps(a) for a in answers) == 1, answers


def test_wrong_token_does_not_spend_the_state(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        params, first = _asked(server)
        responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}
        stolen = raw(server, "tools/call", {**params, "inputResponses": responses, "requestState": first["requestState"]}, capabilities={"elicitation": {}}, headers={"Authorization": "Bearer nope"})
        honest = _answer(server, params, first["requestState"])
    assert stolen.status_code == 401 and MARK not in stolen.text
    assert MARK in json.dumps(honest)


def test_state_reused_with_another_tool_or_path_spelling(tmp_path, tree):
    with servers(tmp_path, tree, 1) as (server,):
        params, first = _asked(server)
        state = first["requestState"]
        other_tool = _clean(raw(server, "tools/call", {"name": "read_multiple_files", "arguments": {"paths": ["proj/.env"]}, "inputResponses": {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}, "requestState": state}, capabilities={"elicitation": {}}))
        respelled = _answer(server, {"name": "read_file", "arguments": {"path": "proj/./.env"}}, state)
        extra_arg = _answer(server, {"name": "read_file", "arguments": {"path": "proj/.env", "head": 5}}, state)
    for got in (other_tool, respelled, extra_arg):
        assert MARK not in json.dumps(got), got


@pytest.mark.parametrize(
    "state",
    ["", "." * 10, "a.b.c", "x" * (1 << 19), 12, None, {"a": 1}, ["x"], "\u0000.\u0000", "e30." + "A" * 43, "%%%%.####"],
    ids=["empty", "dots", "three-parts", "half-MiB", "int", "null", "object", "list", "nul", "empty-json-bad-mac", "not-b64"],
)
def test_malformed_request_state_is_a_clean_refusal(tmp_path, tree, state):
    with servers(tmp_path, tree, 1) as (server,):
        params, _ = _asked(server)
        responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}
        got = _clean(raw(server, "tools/call", {**params, "inputResponses": responses, "requestState": state}, capabilities={"elicitation": {}}))
    assert MARK not in json.dumps(got)


@pytest.mark.parametrize(
    "meta",
    [
        [1, 2],
        "meta",
        {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": "all"},
        {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {"elicitation": "yes", "roots": 5}},
        {**ENV_META, "progressToken": {"a": 1}},
        {**ENV_META, WORKSPACE: ["/"]},
        {**ENV_META, WORKSPACE: "\u0000"},
        {**ENV_META, WORKSPACE: "x" * 100000},
    ],
    ids=["list", "string", "int-version", "caps-string", "caps-wrong-types", "progress-object", "workspace-list", "workspace-nul", "workspace-huge"],
)
def test_malformed_meta_is_a_clean_error(tmp_path, tree, meta):
    with servers(tmp_path, tree, 1) as (server,):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "top.txt"}, "_meta": meta}}
        got = _clean(_post(server, body, {"Mcp-Method": "tools/call", "Mcp-Name": "read_file"}))
        alive = _clean(raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "top.txt"}}))
    assert alive["result"]["content"][0]["text"] == "at the top\n"


def test_deep_meta_is_a_clean_error(tmp_path, tree):
    deep = "[" * 50000 + "]" * 50000
    with servers(tmp_path, tree, 1) as (server,):
        text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"top.txt"},"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":{"x":%s}}}}' % (VERSION, deep)
        got = httpx2.post(server.url, content=text.encode(), headers={**HEADERS, "Content-Type": "application/json", "Mcp-Method": "tools/call", "Mcp-Name": "read_file"}, timeout=60)
        assert got.status_code < 500 and "Traceback" not in got.text, (got.status_code, got.text[:300])
        alive = _clean(raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "top.txt"}}))
    assert alive["result"]["content"][0]["text"] == "at the top\n"


def test_workspace_handle_through_symlink_or_dotdot_outside_roots(tmp_path, tree):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n")
    (tree / "proj" / "link").symlink_to(outside)
    with servers(tmp_path, tree, 1) as (server,):
        got = [
            _clean(raw(server, "tools/call", {"name": "read_file", "arguments": {"path": "secret.txt"}, "_meta": {WORKSPACE: handle}}))
            for handle in (str(tree / "proj" / "link"), str(tree / "proj" / ".." / ".." / "outside"), "../outside", str(tree / "proj") + "/../../outside")
        ]
    for answer in got:
        assert "outside secret" not in json.dumps(answer), answer


def test_workspace_handle_from_another_servers_roots(tmp_path, tree):
    other_root = tmp_path / "other-root"
    other_root.mkdir()
    (other_root / "theirs.txt").write_text("their file\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with servers(tmp_path / "a", tree, 1) as (mine,), servers(tmp_path / "b", other_root, 1) as (theirs,):
        moved = _clean(raw(theirs, "tools/call", {"name": "set_workspace", "arguments": {"path": str(other_root)}}))
        handle = moved["result"]["_meta"][WORKSPACE]
        got = _clean(raw(mine, "tools/call", {"name": "read_file", "arguments": {"path": "theirs.txt"}, "_meta": {WORKSPACE: handle}}))
    assert "their file" not in json.dumps(got)


def test_session_id_in_body_envelope_without_version_header(tmp_path, tree):
    """Mix eras: open a real session, then send a 2026 envelope with its session id but no MCP-Protocol-Version header."""
    with servers(tmp_path, tree, 1) as (server,):
        init = httpx2.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}}, headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}, timeout=60)
        sid = init.headers.get("mcp-session-id")
        assert sid
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "proj/.env"}, "_meta": {**ENV_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}}
        mixed = httpx2.post(server.url, json=body, headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid}, timeout=60)
    assert mixed.status_code < 500 and "Traceback" not in mixed.text, (mixed.status_code, mixed.text[:300])
    assert MARK not in mixed.text


def test_unanswered_consent_rounds_leave_no_files_and_bounded_memory(tmp_path, tree):
    state_home = tmp_path / "state"
    state_home.mkdir(mode=0o700)
    with servers(tmp_path, tree, 1, env={"XDG_STATE_HOME": str(state_home)}) as (server,):
        for _ in range(5):
            _asked(server)
        rss0 = _rss(server.process.pid)
        for _ in range(300):
            _asked(server)
        rss1 = _rss(server.process.pid)
        spent = state_home / "fsmcp" / "http" / "spent"
        files = list(spent.rglob("*")) if spent.exists() else []
    assert len(files) == 0, len(files)
    assert rss1 - rss0 < 40 << 20, (rss0, rss1)


def _rss(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def test_many_spent_states_are_bounded_files(tmp_path, tree):
    """Answered rounds create nonce files; count them per answered round (1 each at most)."""
    state_home = tmp_path / "state"
    state_home.mkdir(mode=0o700)
    with servers(tmp_path, tree, 1, env={"XDG_STATE_HOME": str(state_home)}) as (server,):
        for _ in range(20):
            params, first = _asked(server)
            _answer(server, params, first["requestState"], "deny")
            # also forged states must not create nonce files
            _answer(server, params, first["requestState"][:-2] + "AA")
        files = [p for p in (state_home / "fsmcp" / "http").rglob("*") if p.is_file()]
    assert len(files) <= 21, len(files)


def test_roots_answer_outside_the_operator_roots_does_not_widen(tmp_path, tree):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n")
    with servers(tmp_path, tree, 1) as (server,):
        listed = {"roots": {"roots": [{"uri": "file:///"}, {"uri": outside.as_uri()}]}}
        got = _clean(raw(server, "tools/call", {"name": "read_file", "arguments": {"path": str(outside / "secret.txt")}, "inputResponses": listed}, capabilities={"roots": {}}))
    assert "outside secret" not in json.dumps(got), got


def test_state_reused_by_a_client_with_other_capabilities(tmp_path, tree):
    """The state answered by a client that declares no elicitation: must not read more than the honest round would."""
    with servers(tmp_path, tree, 2) as (one, other):
        params, first = _asked(one)
        responses = {"fsmcp.ask.0": {"action": "accept", "content": {"answer": "allow_once"}}}
        got = _clean(raw(other, "tools/call", {**params, "inputResponses": responses, "requestState": first["requestState"]}, capabilities={}))
        again = _answer(one, params, first["requestState"])
    # at most one read across both uses
    assert sum(MARK in json.dumps(a) for a in (got, again)) <= 1
