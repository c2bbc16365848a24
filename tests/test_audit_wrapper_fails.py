"""A plugin's ``fsmcp_around_call`` that itself fails when asked: the call does not run (a wrapper
may be a policy: the call must not go on without it), the client gets an ``INTERNAL_ERROR``
naming the plugin, and the audit log, asked before it, still has the call's line."""

from __future__ import annotations

import json
from pathlib import Path

import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class BrokenWrapper:
    """A wrapper with a bug: asking it about write_file raises."""

    @hookimpl
    def fsmcp_around_call(self, call, settings):
        if call.name == "write_file":
            raise RuntimeError("a bug in a wrapper")
        return None


@pytest.mark.anyio
async def test_a_wrapper_that_fails_when_asked_stops_the_call_and_it_is_logged(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    host = host_for([root], [("write", fsmcp_write.hooks), ("broken", BrokenWrapper())], audit_log=str(log))
    async with connect(host) as client:
        result = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
        assert result.is_error and text_of(result).startswith("INTERNAL_ERROR"), text_of(result)
        assert "broken" in text_of(result), text_of(result)
        other = await client.call_tool("write_file", {"path": "../escape.txt", "content": "x"})
        assert other.is_error
    assert not (root / "a.txt").exists()
    got = lines(log)
    print("log:", [(line["tool"], line["outcome"]) for line in got])
    assert [(line["tool"], line["outcome"]) for line in got] == [("write_file", "INTERNAL_ERROR")] * 2, got
