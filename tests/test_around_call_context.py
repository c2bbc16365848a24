"""A third party's fsmcp_around_call wrapper cannot make the host skip the path policy: the
client's MCP roots and its session hold for the call however the wrapper runs ``run()``, and the
audit log's line keeps what the call noted (consent's ``allowedOnce``).

A wrapper that runs the rest of the call in another task (a queue that serialises calls, a
timeout helper) runs it in that task's context, not the caller's. The client's view of the roots
and its session travel in context variables that the transport sets around ``CallRunner.call``; the call
runner carries them to the call itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from pathlib import Path

import fsmcp_history.hooks
import fsmcp_read.hooks
import fsmcp_write.hooks
import pytest
from mcp import types

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of

PLUGINS = [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks), ("history", fsmcp_history.hooks)]


class ElsewhereWrapper:
    """Runs the rest of each call in a task of its own context (as a call queue's worker would)."""

    @hookimpl
    def fsmcp_around_call(self, call):
        async def around(run):
            return await asyncio.get_running_loop().create_task(run(), context=contextvars.Context())

        return around


class Roots:
    def __init__(self, *uris: str):
        self.uris = list(uris)

    async def __call__(self, ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in self.uris])


@pytest.fixture(params=["plain", "wrapped"])
def plugins(request):
    """The host's plugins, with and without the wrapper (without it, each test shows what must hold)."""
    return PLUGINS if request.param == "plain" else [*PLUGINS, ("elsewhere", ElsewhereWrapper())]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    base = tmp_path.resolve()
    for name, text in [("srv/proj/a.txt", "in proj"), ("srv/other/b.txt", "in other"), ("away/c.txt", "away")]:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    return base


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_wrapper_that_runs_the_call_elsewhere_keeps_the_clients_narrower_roots(tree, plugins, mode):
    host = host_for([tree / "srv"], plugins)
    async with connect(host, list_roots_callback=Roots((tree / "srv" / "proj").as_uri()), mode=mode) as client:
        result = await client.call_tool("read_file", {"path": str(tree / "srv" / "other" / "b.txt")})
        assert result.is_error and text_of(result).startswith("ACCESS_DENIED: "), text_of(result)
        result = await client.call_tool("write_file", {"path": "../other/new.txt", "content": "x"})
        assert result.is_error, text_of(result)
    assert not (tree / "srv" / "other" / "new.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_wrapper_that_runs_the_call_elsewhere_keeps_a_disjoint_client_refused(tree, plugins, mode):
    host = host_for([tree / "srv"], plugins)
    async with connect(host, list_roots_callback=Roots((tree / "away").as_uri()), mode=mode) as client:
        result = await client.call_tool("read_file", {"path": "proj/a.txt"})
        assert result.is_error and "do not overlap" in text_of(result), text_of(result)


@pytest.mark.anyio
async def test_a_wrapper_that_runs_the_call_elsewhere_keeps_consent_on_the_audit_log(tmp_path, plugins):
    root = tmp_path / "root"
    root.mkdir()
    (root / ".env").write_text("KEY=1")
    log = tmp_path / "audit.log"

    async def user(ctx, params):
        return types.ElicitResult(action="accept", content={"answer": "allow_once"})

    host = host_for([root], plugins, audit_log=str(log), ask_user=True)
    async with connect(host, elicitation_callback=user) as client:
        result = await client.call_tool("read_file", {"path": ".env"})
        assert not result.is_error, text_of(result)
    [line] = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["allowedOnce"] == [str(root.resolve() / ".env")], line
