"""A real MCP client (the `mcp` SDK's, as installed beside fsmcp) against a server command.

    python client.py CALLS_JSON -- COMMAND [ARG ...]

Starts COMMAND over stdio, lists the tools, makes each call in CALLS_JSON (a list of
[tool, arguments]) and prints {"tools": [...], "calls": [{"tool", "isError", "text"}, ...]}.
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import Client, StdioServerParameters


async def main(calls: list[tuple[str, dict]], command: list[str]) -> dict:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params, mode="legacy") as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        done = []
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            done.append({"tool": tool, "isError": bool(result.is_error), "text": text})
    return {"tools": tools, "calls": done}


if __name__ == "__main__":
    separator = sys.argv.index("--")
    print(json.dumps(anyio.run(main, json.loads(sys.argv[1]), sys.argv[separator + 1 :])))
