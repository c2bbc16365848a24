"""A tools/call the transport refuses before any tool runs (its params malformed, or sent before
``initialize``) has its audit line all the same, over stdio and over HTTP: the tool it named
(null when it named none), ``outcome`` ``INVALID_PARAMS`` and ``jsonrpcError``, the code the
client got (docs/configuration.md, the audit log)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx2

from fsmcp.testing import forked, http_url

TIMEOUT = 120
TOKEN = "correct-horse-battery-staple-42"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}


def initialize(id_: int = 0) -> dict:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id_: int, params: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def refused(got: list[dict]) -> list[tuple]:
    return [(line["tool"], line["outcome"], line.get("jsonrpcError"), line["paths"]) for line in got]


def test_over_stdio(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "audit.log"
    requests = [
        call(1, {"name": "write_file", "arguments": {"path": "early.txt", "content": "x"}}),  # before initialize
        initialize(), INITIALIZED,
        call(2, {"name": "write_file", "arguments": "path=a.txt"}),
        call(3, {"arguments": {"path": "b.txt"}}),  # no name
        call(4, ["write_file"]),  # params no object
        call(5, {"name": "read_file", "arguments": {"path": "missing.txt"}}),  # served: the tool's own error
    ]  # fmt: skip
    stdin = tmp_path / "requests.jsonl"
    stdin.write_text("".join(json.dumps(r) + "\n" for r in requests))
    with open(stdin, "rb") as sink:
        done = subprocess.run(forked("serve", str(root), "--audit-log", str(log)), stdin=sink, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()
    answers = {a.get("id"): a for a in map(json.loads, done.stdout.splitlines())}
    codes = {id_: answers[id_].get("error", {}).get("code") for id_ in (1, 2, 3, 4)}
    print("answers:", codes, "log:", refused(lines(log)))
    assert codes == {1: -32600, 2: -32602, 3: -32602, 4: -32602}
    assert not (root / "early.txt").exists()
    assert sorted(refused(lines(log)), key=str) == sorted([
        ("write_file", "INVALID_PARAMS", -32600, ["early.txt"]),
        ("write_file", "INVALID_PARAMS", -32602, []),
        (None, "INVALID_PARAMS", -32602, ["b.txt"]),
        (None, "INVALID_PARAMS", -32602, []),
        ("read_file", "NOT_FOUND", None, ["missing.txt"]),
    ], key=str)  # fmt: skip


def test_over_http(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "audit.log"
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            forked("serve", "--transport", "http", "--port", "0", "--token-file", str(token), "--audit-log", str(log), str(root)),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
    try:
        url = http_url(process, errors)
        with httpx2.Client(headers=HEADERS, timeout=TIMEOUT) as http:
            opened = http.post(url, json=initialize())
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            http.post(url, json=INITIALIZED, headers=session)
            answers = [
                http.post(url, json=call(id_, params), headers=session)
                for id_, params in [
                    (2, {"name": "write_file", "arguments": "path=a.txt"}),
                    (3, {"arguments": {"path": "b.txt"}}),
                    (4, {"name": "read_file", "arguments": {"path": "missing.txt"}}),
                ]
            ]
    finally:
        process.terminate()
        process.wait(timeout=30)

    def code(response: httpx2.Response) -> int | None:
        body = response.text
        data = json.loads(body[body.index("{"):]) if "{" in body else {}
        return data.get("error", {}).get("code")

    codes = [code(r) for r in answers]
    print("answers:", codes, "log:", refused(lines(log)), errors.read_text()[-2000:])
    assert codes == [-32602, -32602, None]
    assert refused(lines(log)) == [
        ("write_file", "INVALID_PARAMS", -32602, []),
        (None, "INVALID_PARAMS", -32602, ["b.txt"]),
        ("read_file", "NOT_FOUND", None, ["missing.txt"]),
    ]
