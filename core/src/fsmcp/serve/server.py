"""The host's tools on the ``mcp`` SDK's low-level server, for streamable HTTP (``http.py``).

Over HTTP this serves the handshake era's sessions; a 2026-07-28 request, which stands alone
without a session, is answered before it reaches the SDK by stdio's dispatch (``http.py``,
``Stateless``); stdio has its own transport (``stdio.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from mcp import MCPDeprecationWarning, types
from mcp.server import Server, ServerRequestContext
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from pydantic import BaseModel, ConfigDict

from ..api import __version__
from .client_roots import ClientRoots
from ..paths.consent import Consent, elicits_forms
from ..paths.guard import Session
from ..run.host import Host

_STATE_KEY = "fsmcp.connection"
_OFFERS_ROOTS = types.ClientCapabilities(roots=types.RootsCapability())
_served: ContextVar[list[bool] | None] = ContextVar("fsmcp_call_served", default=None)
"""Marked by the tools/call handler: the SDK did not refuse the call."""


class _AnyResult(BaseModel):
    model_config = ConfigDict(extra="allow")


def _connection(ctx: ServerRequestContext[Any], host: Host) -> tuple[ClientRoots, Session]:
    """This MCP session's roots and :class:`Session`."""
    # The SDK keeps per-connection state on its Connection, which ServerRequestContext does not
    # expose yet (the SDK's Context rework will); a session's roots must live and die with it.
    state = ctx.session._connection.state
    if _STATE_KEY not in state:
        state[_STATE_KEY] = (ClientRoots(host.roots), Session())
    return state[_STATE_KEY]


def _declared(ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    capabilities = ctx.session.client_capabilities
    return capabilities.model_dump(by_alias=True, exclude_none=True) if capabilities is not None else {}


def build_server(host: Host) -> Server[Any]:
    """One server for every HTTP session; each session's :class:`ClientRoots` end with it."""
    tools = [types.Tool.model_validate(t) for t in host.listing()]  # built once: the list never changes

    async def on_list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if (served := _served.get()) is not None:
            served.append(True)
        client, session = _connection(ctx, host)
        if not client.known and ctx.session.check_client_capability(_OFFERS_ROOTS):

            async def list_roots() -> Any:
                # session.list_roots() would validate every root strictly; ClientRoots is lenient.
                return (await ctx.session.send_request(types.ListRootsRequest(), _AnyResult)).model_dump()

            await client.ask(list_roots)

        async def send_progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        async def elicit(message: str, schema: dict[str, Any]) -> Any:
            return await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)

        asking = Consent(host.settings.ask_timeout, ask=elicit) if elicits_forms(_declared(ctx)) else None
        with host.roots.viewing(client.view):
            result = await host.runner.call(params.name, params.arguments, send_progress=send_progress, session=session, asking=asking)
            return types.CallToolResult.model_validate(result)

    async def on_roots_list_changed(ctx: ServerRequestContext[Any], params: types.NotificationParams | None) -> None:
        _connection(ctx, host)[0].changed()  # asked again before the next tool call, which then sees the new roots

    async def refusals(ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        """A tools/call the SDK refuses before the handler (its params malformed) has its audit line, as over stdio."""
        if ctx.method != "tools/call":
            return await call_next(ctx)
        served: list[bool] = []
        token = _served.set(served)
        try:
            return await call_next(ctx)
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is not None and not served:
                asked = ctx.params if isinstance(ctx.params, Mapping) else {}
                await host.runner.refused(asked.get("name"), asked.get("arguments"), error.code, error.message, session=_connection(ctx, host)[1])
            raise
        finally:
            _served.reset(token)

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
    server.middleware.append(refusals)  # inside the SDK's own (telemetry): it sees each request's params as sent
    return server
