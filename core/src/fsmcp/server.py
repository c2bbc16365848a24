"""The host's tools on the ``mcp`` SDK's low-level server: HTTP (``http.py``), 2026-07-28 clients over stdio."""

from __future__ import annotations

import dataclasses
import warnings
from contextvars import ContextVar
from typing import Any

from mcp import MCPDeprecationWarning, types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from . import __version__
from .client_roots import ClientRoots
from .host import Host


_ROOTS_KEY = "roots"
_STATE_KEY = "fsmcp.client_roots"
_NO_ANSWER = object()
_answer: ContextVar[Any] = ContextVar("fsmcp_roots_answer", default=_NO_ANSWER)
_OFFERS_ROOTS = types.ClientCapabilities(roots=types.RootsCapability())


class _AnyResult(BaseModel):
    model_config = ConfigDict(extra="allow")


def _offers_roots(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.session.check_client_capability(_OFFERS_ROOTS)


async def _take_roots_answer(ctx: ServerRequestContext[Any], call_next: Any) -> Any:
    """Middleware: lift a 2026-07-28 ``inputResponses.roots`` out of ``tools/call`` before the SDK parses it.

    The SDK would reject the whole call for one root that is not ``file://``; the handler
    parses the answer leniently instead (see ``ClientRoots.apply``).
    """
    params = ctx.params
    responses = (params or {}).get("inputResponses")
    if ctx.method != "tools/call" or not isinstance(responses, dict) or _ROOTS_KEY not in responses:
        return await call_next(ctx)
    rest = {k: v for k, v in responses.items() if k != _ROOTS_KEY}
    trimmed = {k: v for k, v in params.items() if k != "inputResponses"} | ({"inputResponses": rest} if rest else {})
    token = _answer.set(responses[_ROOTS_KEY])
    try:
        return await call_next(dataclasses.replace(ctx, params=trimmed))
    finally:
        _answer.reset(token)


def _connection_state(ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    # The SDK keeps per-connection state on its Connection, which ServerRequestContext does not
    # expose yet (the SDK's Context rework will); a session's roots must live and die with it.
    return ctx.session._connection.state


def build_server(host: Host, *, sessions: bool = False) -> Server[Any]:
    """The server, each client's :class:`ClientRoots` its own.

    Over stdio one server serves one client: it is built per connection and keeps one
    ClientRoots. Over HTTP one server serves every session (``sessions=True``): each session's
    ClientRoots live on its connection and end with it. Only handshake-era connections persist
    across requests, so HTTP serves that era alone (see ``http.py``).
    """
    tools = [types.Tool.model_validate(t.wire()) for t in host.tools.values()]  # built once: the list never changes
    own = None if sessions else ClientRoots(host.roots)

    def client_of(ctx: ServerRequestContext[Any]) -> ClientRoots:
        if own is not None:
            return own
        state = _connection_state(ctx)
        if _STATE_KEY not in state:
            state[_STATE_KEY] = ClientRoots(host.roots)
        return state[_STATE_KEY]

    async def on_list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        client = client_of(ctx)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = _answer.get()
            if answer is not _NO_ANSWER:
                client.apply(answer)
            elif not client.known and _offers_roots(ctx):
                return types.InputRequiredResult(input_requests={_ROOTS_KEY: types.ListRootsRequest()})
        elif not client.known and _offers_roots(ctx):

            async def list_roots() -> Any:
                # session.list_roots() would validate every root strictly; ClientRoots is lenient.
                return (await ctx.session.send_request(types.ListRootsRequest(), _AnyResult)).model_dump()

            await client.ask(list_roots)

        async def send_progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        with host.roots.viewing(client.view):
            return types.CallToolResult.model_validate(await host.call(params.name, params.arguments, send_progress=send_progress))

    async def on_roots_list_changed(ctx: ServerRequestContext[Any], params: types.NotificationParams | None) -> None:
        client_of(ctx).changed()  # asked again before the next tool call, which then sees the new roots

    with warnings.catch_warnings():
        # Roots are deprecated as of 2026-07-28, but handshake-era clients still send
        # roots/list_changed, and honouring it is how their roots stay current.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = Server(
            "fsmcp",
            version=__version__,
            instructions=host.instructions(),
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_roots_list_changed=on_roots_list_changed,
        )
    server.middleware.append(_take_roots_answer)
    return server


async def serve_streams(host: Host, stdin: Any, stdout: Any) -> None:
    """Serve one client over text streams (see ``stdio.py``, which hands 2026-07-28 clients here)."""
    server = build_server(host)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
        await server.run(read, write, server.create_initialization_options())
