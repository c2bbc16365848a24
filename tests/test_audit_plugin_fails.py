"""The audit line's outcome is the call's true outcome when a plugin around the call fails.

A call whose result the configured formatter (a plugin's ``fsmcp_format_result``) fails to make
reaches the client as the transport's internal error, and its line must not say ``ok``. A
plugin's ``fsmcp_around_call`` that itself fails when asked stops the call (a wrapper may be a
policy: the call must not go on without it): the client gets an ``INTERNAL_ERROR`` naming the
plugin, and the audit log, asked before it, still has the call's line."""

from __future__ import annotations

import json
from pathlib import Path

import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class BrokenFormat:
    """A formatter with a bug: it fails on write_file's results."""

    @hookimpl(tryfirst=True)
    def fsmcp_format_result(self, tool, outcome, format, settings):
        if tool is not None and tool.name == "write_file":
            raise RuntimeError("a bug in a formatter")
        return {"content": [{"type": "text", "text": "formatted"}]}


class BrokenWrapper:
    """A wrapper with a bug: asking it about write_file raises."""

    @hookimpl
    def fsmcp_around_call(self, call, settings):
        if call.name == "write_file":
            raise RuntimeError("a bug in a wrapper")
        return None


def served(tmp_path: Path, plugin: object):
    root = tmp_path / "root"
    root.mkdir()
    host = host_for([root], [("write", fsmcp_write.hooks), ("broken", plugin)], audit_log=str(tmp_path / "audit.log"))
    return root, tmp_path / "audit.log", connect(host)


@pytest.mark.anyio
async def test_a_call_whose_result_the_formatter_fails_to_make_is_not_logged_ok(tmp_path):
    root, log, connected = served(tmp_path, BrokenFormat())
    async with connected as client:
        with pytest.raises(Exception, match="Internal error") as raised:
            await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
    got = lines(log)
    print("client got:", raised.value)
    print("log:", [(line["tool"], line["outcome"]) for line in got])
    assert len(got) == 1 and got[0]["outcome"] != "ok", got


@pytest.mark.anyio
async def test_a_wrapper_that_fails_when_asked_stops_the_call_and_it_is_logged(tmp_path):
    root, log, connected = served(tmp_path, BrokenWrapper())
    async with connected as client:
        result = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
        assert result.is_error and text_of(result).startswith("INTERNAL_ERROR") and "broken" in text_of(result), text_of(result)
        other = await client.call_tool("write_file", {"path": "../escape.txt", "content": "x"})
        assert other.is_error
    assert not (root / "a.txt").exists()
    got = [(line["tool"], line["outcome"]) for line in lines(log)]
    assert got == [("write_file", "INTERNAL_ERROR")] * 2, got
