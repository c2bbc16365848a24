"""The audit log has one line per call a client makes, with the call's outcome (docs/configuration.md),
whatever the wrappers of ``fsmcp_around_call`` do and however the call ends."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anyio
import fsmcp_read.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import Tool, ToolInput, hookimpl
from fsmcp.testing import cancel_when, connect, host_for, text_of


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class Raises:
    """A wrapper with a bug: it raises once the call has run."""

    @hookimpl
    def fsmcp_around_call(self, call):
        async def around(run):
            await run()
            raise RuntimeError("a bug in a wrapper")

        return around


class RefusesFirst:
    """The documented sketch of a wrapper that refuses calls, registered ``tryfirst``."""

    @hookimpl(tryfirst=True)
    def fsmcp_around_call(self, call):
        if call.tool is None or call.tool.annotations.read_only:
            return None

        async def around(run):
            from fsmcp import ErrorCode, ToolError

            return ToolError(ErrorCode.ACCESS_DENIED, f"{call.name} changes files, which this server does not allow now")

        return around


STARTED = threading.Event()


class WaitInput(ToolInput):
    pass


def wait(args, ctx):
    STARTED.set()
    for _ in range(6000):  # until cancelled (bounded by count)
        ctx.check_cancelled()
        threading.Event().wait(0.01)
    return "never cancelled"


class Waits:
    @hookimpl
    def fsmcp_register_tools(self, register):
        register(Tool(name="wait_for_cancel", description="waits until cancelled", input_model=WaitInput, function=wait))


PLUGINS = [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks)]


@pytest.mark.anyio
async def test_a_call_a_wrapper_ended_with_an_internal_error_is_not_logged_ok(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    host = host_for([root], [*PLUGINS, ("raises", Raises())], audit_log=str(log))
    async with connect(host) as client:
        with pytest.raises(Exception, match="Internal error"):
            await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
    [line] = lines(log)
    assert line["tool"] == "write_file" and line["outcome"] != "ok", line


@pytest.mark.anyio
async def test_a_call_refused_by_a_tryfirst_wrapper_has_its_line(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    host = host_for([root], [*PLUGINS, ("refuses", RefusesFirst())], audit_log=str(log))
    async with connect(host) as client:
        result = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
        assert result.is_error and text_of(result).startswith("ACCESS_DENIED: ")
    assert [(line["tool"], line["outcome"]) for line in lines(log)] == [("write_file", "ACCESS_DENIED")]


@pytest.mark.anyio
async def test_a_cancelled_call_is_not_logged_ok(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    STARTED.clear()
    host = host_for([root], [*PLUGINS, ("waits", Waits())], audit_log=str(log))
    async with connect(host) as client:
        await cancel_when(client, "wait_for_cancel", {}, STARTED.is_set)
        await anyio.sleep(0)
    [line] = lines(log)
    assert line["tool"] == "wait_for_cancel" and line["outcome"] != "ok", line


class OwnLog:
    """A plugin named as the audit log: it replaces the host's."""

    def __init__(self):
        self.calls = []

    @hookimpl(tryfirst=True)
    def fsmcp_around_call(self, call):
        self.calls.append(call.name)
        return None


@pytest.mark.anyio
async def test_a_plugin_named_as_the_audit_log_replaces_it(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    own = OwnLog()
    host = host_for([root], [*PLUGINS, ("fsmcp.audit", own)], audit_log=str(log))
    async with connect(host) as client:
        result = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
        assert not result.is_error, text_of(result)
    assert own.calls == ["write_file"] and lines(log) == []
