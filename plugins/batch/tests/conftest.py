"""Fixtures for the batch plugin's tests: real files in tmp_path, read, write and batch under
fsmcp.testing's fixtures (``root``, ``server``: the SDK's real client in process)."""

from __future__ import annotations

import json
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

import fsmcp_batch.hooks
import fsmcp_read.hooks
import fsmcp_write.hooks
import pytest
from fsmcp.testing import text_of, tree_of

PLUGINS = [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks), ("batch", fsmcp_batch.hooks)]


class Session:
    def __init__(self, client, host):
        self.client = client
        self.host = host

    async def batch(self, operations, **options) -> tuple[bool, str]:
        result = await self.client.call_tool("batch_operations", {"operations": operations, **options})
        return bool(result.is_error), text_of(result)

    async def ok(self, operations, **options) -> str:
        is_error, text = await self.batch(operations, **options)
        assert not is_error, text
        return text

    async def fail(self, code: str, operations, **options) -> str:
        is_error, text = await self.batch(operations, **options)
        assert is_error, text
        assert text.startswith(f"{code}: "), text
        return text

    async def data(self, operations, **options) -> dict:
        """The batch's data, as the json formatter sends it (the session must use format="json")."""
        result = await self.client.call_tool("batch_operations", {"operations": operations, **options})
        envelope = json.loads(result.content[0].text)
        assert envelope["ok"] is not result.is_error, envelope
        return envelope["data"] if envelope["ok"] else envelope["error"]["details"]


@pytest.fixture(autouse=True)
def saved_copies(tmp_path: Path, monkeypatch):
    """The host keeps snapshot copies in the temporary directory: here, this test's own; none may stay."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    yield where
    assert sorted(where.glob("fsmcp-snapshot-*")) == []


@pytest.fixture
def fsmcp_plugins():
    return PLUGINS


@pytest.fixture
def server(server):
    """``async with server(extra_plugins, roots=[...], **settings) as s``: fsmcp.testing's ``server``
    with read, write, batch and ``extra_plugins``, over ``root`` by default, as a ``Session``."""

    @asynccontextmanager
    async def open_session(extra=(), roots=(), **settings):
        async with server(*roots, load=[*PLUGINS, *extra], **settings) as calls:
            yield Session(calls.client, calls.host)

    return open_session


@pytest.fixture(name="tree_of")
def tree_of_fixture():
    return tree_of
