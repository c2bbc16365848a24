"""Asking the user before a refusal stands: ``fsmcp.Refusal`` and MCP elicitation."""

import types as pytypes

import pytest

from fsmcp import Access, READ_ONLY, Refusal, Tool, ToolInput, hookimpl
from fsmcp.testing import connect, host_for, text_of


class PathInput(ToolInput):
    path: str


def peek(args, ctx):
    with ctx.fs.open_read(args.path) as fh:
        return fh.read().decode()


def _plugin() -> object:
    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("peek", "Read a file.", PathInput, peek, READ_ONLY))

    @hookimpl
    def fsmcp_check_path(path, access):
        if path.path.name == ".env":
            return Refusal("the file holds secrets", ask=f"The agent wants to {'read' if access is Access.READ else 'change'} .env")
        return None

    module.fsmcp_register_tools = fsmcp_register_tools
    module.fsmcp_check_path = fsmcp_check_path
    return module


@pytest.fixture
def root(tmp_path):
    (tmp_path / ".env").write_text("TOKEN=s3cret")
    return tmp_path


def test_a_refusal_is_its_reason_and_carries_its_question():
    refusal = Refusal("the file holds secrets", ask="The agent wants to read .env")
    assert refusal == "the file holds secrets" and isinstance(refusal, str)
    assert refusal.ask == "The agent wants to read .env"
    assert Refusal("no").ask is None


@pytest.mark.anyio
async def test_a_refusal_refuses_like_its_reason(root):
    async with connect(host_for([root], [("consent", _plugin())])) as client:
        result = await client.call_tool("peek", {"path": ".env"})
    assert result.is_error and text_of(result) == "ACCESS_DENIED: '.env' is refused: the file holds secrets"
