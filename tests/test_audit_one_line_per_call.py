"""Every call a client makes leaves exactly one whole audit line with its true outcome, and each
``fsmcp_around_call`` implementation is asked once per call (docs/configuration.md, docs/hooks.md):
calls the host refuses before the tool runs, a wrapper that raises before the call runs, and a
batch whose steps are tools too."""

from __future__ import annotations

import json
from pathlib import Path

import fsmcp_batch.hooks
import fsmcp_read.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of

PLUGINS = [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks)]


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class Counter:
    def __init__(self):
        self.asked: list[str] = []

    @hookimpl
    def fsmcp_around_call(self, call):
        self.asked.append(call.name)

        async def around(run):
            return await run()

        return around


class RaisesFirst:
    """A wrapper with a bug: it raises before the call runs."""

    @hookimpl
    def fsmcp_around_call(self, call):
        async def around(run):
            raise RuntimeError("a bug in a wrapper")

        return around


@pytest.mark.anyio
async def test_calls_refused_before_the_tool_runs_have_one_line_each_with_their_code(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    counter = Counter()
    host = host_for([root], [*PLUGINS, ("counter", counter)], audit_log=str(log))
    async with connect(host) as client:
        unknown = await client.call_tool("no_such_tool", {"path": "a.txt"})
        invalid = await client.call_tool("write_file", {"path": "a.txt"})  # no content
        outside = await client.call_tool("read_file", {"path": "/etc/hostname"})
    got = lines(log)
    print("client saw:", [text_of(r)[:60] for r in (unknown, invalid, outside)])
    print("log:", [(line["tool"], line["outcome"]) for line in got])
    assert [line["tool"] for line in got] == ["no_such_tool", "write_file", "read_file"], got
    for line, result in zip(got, (unknown, invalid, outside)):
        assert result.is_error
        assert text_of(result).startswith(line["outcome"] + ":"), (line, text_of(result))
    assert counter.asked == ["no_such_tool", "write_file", "read_file"]


@pytest.mark.anyio
async def test_a_wrapper_that_raises_before_the_call_runs_leaves_an_internal_error_line(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    host = host_for([root], [*PLUGINS, ("raises", RaisesFirst())], audit_log=str(log))
    async with connect(host) as client:
        with pytest.raises(Exception, match="Internal error"):
            await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
    got = lines(log)
    print("log:", got)
    assert [(line["tool"], line["outcome"]) for line in got] == [("write_file", "INTERNAL_ERROR")]
    assert not (root / "a.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("transactional", [True, False])
async def test_a_batch_is_one_line_and_one_question_to_each_wrapper(tmp_path, transactional):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    (root / "r.txt").write_text("r\n")
    counter = Counter()
    host = host_for([root], [*PLUGINS, ("counter", counter)], audit_log=str(log))
    async with connect(host) as client:
        result = await client.call_tool("batch_operations", {"transactional": transactional, "operations": [
            {"tool": "write_file", "arguments": {"path": "a.txt", "content": "a"}},
            {"tool": "read_file", "arguments": {"path": "r.txt"}},
            {"tool": "read_file", "arguments": {"path": "missing.txt"}},
        ]})  # fmt: skip
    got = lines(log)
    print("client saw:", text_of(result)[:200])
    print("log:", [(line["tool"], line["outcome"], line["paths"]) for line in got], "asked:", counter.asked)
    assert [line["tool"] for line in got] == ["batch_operations"]
    if result.is_error:  # transactional: the failed step fails the batch
        assert text_of(result).startswith(got[0]["outcome"] + ":"), (got, text_of(result))
    else:  # each step's outcome is in the batch's result, which is the call's
        assert got[0]["outcome"] == "ok", got
    assert counter.asked == ["batch_operations"]


class _Roots:
    def __init__(self, *uris: str):
        self.uris = list(uris)

    async def __call__(self, ctx):
        from mcp import types

        return types.ListRootsResult(roots=[types.Root(uri=u) for u in self.uris])


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_with_roots_has_one_line_per_call_and_each_wrapper_asked_once(tmp_path, mode):
    """In the 2026-07-28 era the server first answers input_required to learn the client's roots
    (a round trip the SDK's client makes for its one call)."""
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    (root / "mine").mkdir(parents=True)
    counter = Counter()
    host = host_for([root], [*PLUGINS, ("counter", counter)], audit_log=str(log))
    async with connect(host, list_roots_callback=_Roots((root / "mine").as_uri()), mode=mode) as client:
        first = await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
        second = await client.call_tool("read_file", {"path": "a.txt"})
    got = lines(log)
    print(mode, "log:", [(line["tool"], line["outcome"]) for line in got], "asked:", counter.asked)
    assert not first.is_error and not second.is_error, (text_of(first), text_of(second))
    assert [(line["tool"], line["outcome"]) for line in got] == [("write_file", "ok"), ("read_file", "ok")]
    assert counter.asked == ["write_file", "read_file"]
