"""The MCP server: the host's tools on the ``mcp`` SDK's low-level server, over stdio."""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from . import __version__
from .host import Host
from .tools import Tool


def wire_tool(tool: Tool) -> types.Tool:
    a = tool.annotations
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema(),
        output_schema=tool.output_model.model_json_schema(by_alias=True) if tool.output_model else None,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=a.read_only,
            destructive_hint=a.destructive,
            idempotent_hint=a.idempotent,
            open_world_hint=a.open_world,
        ),
    )


def instructions(host: Host) -> str:
    roots = "; ".join(r.describe() for r in host.roots.roots)
    return (
        f"File tools over these directories: {roots}. Relative paths resolve against "
        f"{host.roots.workspace}. Failures lead with a code (NOT_FOUND, ACCESS_DENIED, ...) and say what to do next."
    )


def build_server(host: Host) -> Server[Any]:
    tools = [wire_tool(t) for t in host.tools.values()]  # built once: the list never changes

    async def on_list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        async def send_progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        return await host.call(params.name, params.arguments, send_progress=send_progress)

    return Server(
        "fsmcp",
        version=__version__,
        instructions=instructions(host),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(host: Host) -> None:
    server = build_server(host)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
