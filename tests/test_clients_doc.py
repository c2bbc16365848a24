"""The client snippets in docs/clients.md start a working server, exactly as written."""

import json
import re
import shlex
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from fsmcp.testing import text_of

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "clients.md").read_text()


def snippets() -> list[tuple[str, list[str]]]:
    found = []
    for block in re.findall(r"```json\n(.*?)```", DOC, re.S):
        servers = json.loads(block)
        for entry in (servers.get("mcpServers") or servers.get("servers")).values():
            found.append((entry["command"], entry["args"]))
    for line in re.findall(r"```sh\n(claude mcp add .*?)\n```", DOC, re.S):
        words = shlex.split(line)
        command = words[words.index("--") + 1 :]
        found.append((command[0], command[1:]))
    return found


def test_the_page_has_every_client():
    for client in ("Claude Desktop", "Claude Code", "Cursor", "VS Code"):
        assert f"## {client}" in DOC
    assert len(snippets()) == 6


@pytest.mark.anyio
@pytest.mark.parametrize("command, args", snippets(), ids=lambda v: v if isinstance(v, str) else " ".join(v[-3:]))
async def test_snippet_starts_a_working_server(tmp_path, command, args):
    (tmp_path / "hello.txt").write_text("hello from a client config\n")
    filled = [a.replace("/path/to/fsmcp", str(REPO)).replace("/path/to/project", str(tmp_path)) for a in args]
    async with Client(StdioServerParameters(command=command, args=filled, cwd=str(tmp_path))) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("read_file", {"path": "hello.txt"})
    assert "read_file" in tools
    assert text_of(result) == "hello from a client config\n"
    if "--read-only" in filled:
        assert "write_file" not in tools
