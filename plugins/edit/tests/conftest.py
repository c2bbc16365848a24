import pytest

from fsmcp.testing import connect, host_for
from fsmcp_edit import hooks

PLUGIN = ("edit", hooks)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def call(root):
    """``await call(tool, arguments, **settings)`` through the SDK's client, on a host over ``root``."""

    async def call(tool, arguments, *, roots=None, **settings):
        host = host_for(roots or [root], [PLUGIN], **settings)
        async with connect(host) as client:
            return await client.call_tool(tool, arguments)

    return call
