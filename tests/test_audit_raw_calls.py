"""Every tools/call a client sends leaves one audit line, over the real ``fsmcp serve`` on stdio:
also one whose params the transport refuses (arguments that are no object), and calls sent in a
JSON-RPC batch (2025-03-26)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TIMEOUT = 120


def exchange(root: Path, log: Path, *lines: dict | list) -> list:
    requests = root.parent / "requests.jsonl"
    requests.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open(requests, "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "fsmcp", "serve", str(root), "--audit-log", str(log)], stdin=stdin, capture_output=True, timeout=TIMEOUT
        )
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()]


def initialize(version: str) -> dict:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def call(id_: int, name: object, arguments: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_call_the_transport_refuses_has_its_line(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "audit.log"
    answers = exchange(
        root, log, initialize("2025-11-25"), INITIALIZED,
        call(1, "write_file", {"path": "ok.txt", "content": "x"}),
        call(2, "write_file", "path=a.txt content=x"),
        call(3, "write_file", [{"path": "b.txt", "content": "x"}]),
    )  # fmt: skip
    got = lines(log)
    print("answers:", [a.get("error") or "result" for a in answers if a.get("id") in (1, 2, 3)])
    print("log:", [(line["tool"], line["outcome"]) for line in got])
    assert len(got) == 3, got


def test_calls_in_a_json_rpc_batch_have_one_line_each(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "audit.log"
    answers = exchange(
        root, log, initialize("2025-03-26"), INITIALIZED,
        [call(1, "write_file", {"path": "a.txt", "content": "a"}), call(2, "read_file", {"path": "missing.txt"})],
    )  # fmt: skip
    got = lines(log)
    print("answers:", answers[1:])
    print("log:", [(line["tool"], line["outcome"]) for line in got])
    assert sorted((line["tool"], line["outcome"]) for line in got) == [("read_file", "NOT_FOUND"), ("write_file", "ok")], got
