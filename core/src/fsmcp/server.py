"""The MCP server: the host's tools on the ``mcp`` SDK's low-level server (stdio here; HTTP in ``http.py``)."""

from __future__ import annotations

import dataclasses
import logging
import warnings
from contextvars import ContextVar
from typing import Any

import anyio
from mcp import MCPDeprecationWarning, MCPError, types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from . import __version__
from .host import Host
from .roots import RootSet
from .tools import Tool

log = logging.getLogger("fsmcp")

ROOTS_TIMEOUT = 10.0
"""Seconds a handshake-era client has to answer ``roots/list`` before the call is refused."""

_ROOTS_KEY = "roots"
_STATE_KEY = "fsmcp.client_roots"
_NO_ANSWER = object()
_answer: ContextVar[Any] = ContextVar("fsmcp_roots_answer", default=_NO_ANSWER)
_OFFERS_ROOTS = types.ClientCapabilities(roots=types.RootsCapability())


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
    roots = "; ".join(r.describe() for r in host.roots.operator)
    return (
        f"File tools over these directories: {roots} (a client's MCP roots can narrow them, never widen them). "
        f"Relative paths resolve against the workspace, at first {host.roots.operator[0].path}. "
        "Failures lead with a code (NOT_FOUND, ACCESS_DENIED, ...) and say what to do next."
    )


class _RootsAnswer(BaseModel):
    # Lenient on purpose: the SDK's ListRootsResult rejects the whole answer for one root that
    # is not file://, and a malformed root must be refused alone.
    roots: list[Any]


class ClientRoots:
    """One connection's view of the roots, narrowed by the client's MCP roots when it has any.

    Handshake era: asked with ``roots/list`` before the first tool call, again after
    ``notifications/roots/list_changed``. 2026-07-28 era: asked through an
    ``InputRequiredResult`` on the first tool call, then cached for the connection.
    """

    def __init__(self, roots: RootSet):
        self.roots = roots
        self.view = roots.new_view()
        self.known = False
        self._lock = anyio.Lock()

    def apply(self, answer: Any) -> None:
        try:
            listed = _RootsAnswer.model_validate(answer).roots
        except ValidationError:
            self.fail("its answer to roots/list is not a list of roots")
            return
        uris = [item.get("uri") if isinstance(item, dict) else item for item in listed]
        for problem in self.roots.narrow(self.view, uris):
            log.warning(problem)
        log.info("client roots %s; usable roots: %s", uris, ", ".join(r.describe() for r in self.view.roots) or "none")
        self.known = True

    def fail(self, why: str) -> None:
        # Fail closed, and ask again at the next call: falling back to the operator's roots
        # would silently widen what the client asked for.
        log.warning("client roots unavailable: %s", why)
        self.view.refusal = f"the client offers MCP roots, but {why}; no path is allowed until it lists them (try again)"
        self.known = False

    def changed(self) -> None:
        self.known = False

    async def ask(self, ctx: ServerRequestContext[Any]) -> None:
        """Handshake era: send ``roots/list`` on the back-channel, unless the answer is current."""
        async with self._lock:
            if self.known:
                return
            try:
                with anyio.fail_after(ROOTS_TIMEOUT):
                    # session.list_roots() would validate every root strictly; see _RootsAnswer.
                    answer = await ctx.session.send_request(types.ListRootsRequest(), _RootsAnswer)
            except TimeoutError:
                self.fail(f"it did not answer roots/list within {ROOTS_TIMEOUT:g} seconds")
            except (MCPError, ValidationError) as exc:
                self.fail(f"roots/list failed ({exc})")
            else:
                self.apply(answer.model_dump())


def _offers_roots(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.session.check_client_capability(_OFFERS_ROOTS)


async def _take_roots_answer(ctx: ServerRequestContext[Any], call_next: Any) -> Any:
    """Middleware: lift a 2026-07-28 ``inputResponses.roots`` out of ``tools/call`` before the SDK parses it.

    The SDK would reject the whole call for one root that is not ``file://``; the handler
    parses the answer leniently instead (see ``_RootsAnswer``).
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
    tools = [wire_tool(t) for t in host.tools.values()]  # built once: the list never changes
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
            await client.ask(ctx)

        async def send_progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        with host.roots.viewing(client.view):
            return await host.call(params.name, params.arguments, send_progress=send_progress)

    async def on_roots_list_changed(ctx: ServerRequestContext[Any], params: types.NotificationParams | None) -> None:
        client_of(ctx).changed()  # asked again before the next tool call, which then sees the new roots

    with warnings.catch_warnings():
        # Roots are deprecated as of 2026-07-28, but handshake-era clients still send
        # roots/list_changed, and honouring it is how their roots stay current.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = Server(
            "fsmcp",
            version=__version__,
            instructions=instructions(host),
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_roots_list_changed=on_roots_list_changed,
        )
    server.middleware.append(_take_roots_answer)
    return server


async def serve_stdio(host: Host) -> None:
    server = build_server(host)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
