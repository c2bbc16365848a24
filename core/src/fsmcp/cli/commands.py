"""``fsmcp serve``, ``tools``, ``plugins``, ``call`` and ``new-plugin``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import console
from ..api.config import SANDBOX_MODES, TRANSPORTS, ConfigError, Settings, build_settings, load_toml

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..run.host import Host

USAGE = 2


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _parser() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--config", type=Path, metavar="FILE", help="a TOML file with the same settings (command-line options win)")
    options.add_argument("--read-only", action="store_true", default=None, help="refuse every change, in every root (READ_ONLY)")
    options.add_argument("--enable", action="extend", type=_names, metavar="NAME[,NAME]", help="offer only these plugins or tools (repeatable)")
    options.add_argument("--disable", action="extend", type=_names, metavar="NAME[,NAME]", help="do not offer these plugins or tools (repeatable)")
    options.add_argument("--format", metavar="NAME", help="result format (default: text)")
    options.add_argument("--policy", metavar="NAME", help="path policy: roots (default) or workspace (relative paths only, plugin fsmcp-workspace)")
    options.add_argument("--require-workspace", action="store_true", default=None, help="refuse every path until the client calls set_workspace")
    options.add_argument("--budget", type=int, metavar="CHARS", help="the most text characters one result carries (default: 80000)")
    options.add_argument("--journal", metavar="DIR|off", help="the change journal's directory (default: $XDG_STATE_HOME/fsmcp/journal), or off")
    options.add_argument("--sandbox", choices=SANDBOX_MODES, help="confine started programs with Landlock: auto (default) and require withhold the tools that start programs where the kernel cannot; off starts them unconfined")
    options.add_argument("--audit-log", metavar="FILE", help="append one JSON line per tool call to FILE (rotated at audit_log_max_bytes)")
    options.add_argument("--no-ask", action="store_true", help="never ask the user to allow a refused read (MCP elicitation); the refusal stands")
    options.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")
    roots = argparse.ArgumentParser(add_help=False)
    roots.add_argument("roots", nargs="*", metavar="DIR[:ro]", help="allowed root directories (default: the current directory); DIR:ro makes one read-only")

    parser = argparse.ArgumentParser(prog="fsmcp", description="A plugin-based MCP server for safe file tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", parents=[roots, options], help="run the MCP server (stdio, or streamable HTTP)")
    serve.add_argument("--transport", choices=TRANSPORTS, help="stdio (default) or http (streamable HTTP, bearer token required)")
    serve.add_argument("--host", metavar="ADDRESS", help="HTTP: the address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, metavar="PORT", help="HTTP: the port to listen on (default: 8765; 0: any free port)")
    serve.add_argument("--token-file", metavar="FILE", help="HTTP: a file holding the bearer token (default: $FSMCP_TOKEN)")
    serve.add_argument("--allow-host", action="extend", type=_names, dest="allow_hosts", metavar="HOST:PORT", help="HTTP: also accept this Host header (repeatable)")
    serve.add_argument("--workers", type=int, metavar="N", help="HTTP: worker processes serving the port (default: one per core; 1: a single process)")
    serve.add_argument("--allow-origin", action="extend", type=_names, dest="allow_origins", metavar="ORIGIN", help="HTTP: also accept this Origin header (repeatable)")
    sub.add_parser("tools", parents=[roots, options], help="list the tools this configuration offers, their plugins and definition sizes")
    sub.add_parser("plugins", parents=[roots, options], help="list installed plugins, versions, status and tools")
    call = sub.add_parser("call", parents=[options], help="run one tool without a client and print its result")
    call.add_argument("tool", metavar="TOOL", help="the tool's name (fsmcp tools lists them)")
    call.add_argument("arguments", metavar="JSON", help="the tool's arguments as a JSON object, or - to read them from standard input")
    call.add_argument("roots", nargs="*", metavar="DIR[:ro]", help="allowed root directories (default: the current directory)")
    call.add_argument("--root", action="append", dest="more_roots", default=[], metavar="DIR[:ro]", help="an allowed root directory (repeatable)")
    new = sub.add_parser("new-plugin", help="write a new plugin package from the template")
    new.add_argument("name", metavar="NAME", help="the plugin's name: lower-case letters and digits, words joined by _ (such as line_count)")
    new.add_argument("--dir", type=Path, default=Path("."), metavar="PARENT", help="where to write fsmcp-NAME (default: the current directory)")
    return parser


REFERENCE_PER_TOOL = 974
"""The reference filesystem server's characters of tools/list per tool, as bench/perf.py measures
both servers (2026.8.31): the figure a definition's cost is held against."""


_SETTINGS = (
    "read_only", "enable", "disable", "format", "policy", "require_workspace", "budget", "journal", "sandbox", "audit_log",
    "transport", "host", "port", "token_file", "allow_hosts", "allow_origins", "workers",
)
"""The settings an option of the same name gives (those of ``serve`` alone are missing elsewhere)."""


def settings_from_args(args: argparse.Namespace) -> Settings:
    file_values: dict[str, Any] = load_toml(args.config) if args.config else {}
    cli_values = {name: getattr(args, name, None) for name in _SETTINGS}
    cli_values["roots"] = [*args.roots, *getattr(args, "more_roots", [])]
    if args.no_ask:
        file_values["ask_user"] = False  # build_settings keeps a file's value over a command line's False
    return build_settings(file_values, cli_values)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if hasattr(args, "roots"):
        # Roots may follow the options too (fsmcp call TOOL - --format json DIR), as they may follow the tool's arguments.
        args.roots += [e for e in extra if not e.startswith("-")]
        extra = [e for e in extra if e.startswith("-")]
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    console.configure(getattr(args, "log_level", "WARNING"))
    if args.command == "new-plugin":
        return _new_plugin(args.name, args.dir)

    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        return _error(exc)
    if args.command == "serve" and settings.transport == "stdio":
        return _serve_stdio(settings)
    if args.command == "serve":
        from ..serve.workers import supervise, workers_for

        if (count := workers_for(settings)) > 1:
            return supervise(settings, count, _serve_worker, console.say, console.error)

    from ..run.host import Host, HostError

    try:
        host = Host.start(settings)
    except HostError as exc:
        return _error(exc)

    if args.command == "tools":
        import json

        # Each definition's characters as tools/list sends it: what the model reads in every request.
        sizes = [len(json.dumps(wire)) for wire in host.listing()]
        for tool, size in zip(host.tools.values(), sizes):
            print(f"{tool.name:<28} {tool.plugin:<14} {size:>6,}")
        if sizes:
            tools = f"{len(sizes)} tools" if len(sizes) != 1 else "1 tool"
            mean = sum(sizes) / len(sizes)
            console.say(
                f"{tools}, {sum(sizes):,} characters of definitions ({mean:,.0f} per tool; "
                f"{mean / REFERENCE_PER_TOOL:.2f}x the reference server's {REFERENCE_PER_TOOL})"
            )
        return 0
    if args.command == "plugins":
        console.say(host.sandbox.describe())
        console.say(host.sandbox.hiding())
        console.say(host.sandbox.undoing())
        offered_tools = set(host.tools)
        from ..run.plugins import BUILT_IN

        # The host's own last; a plugin that replaces one (the same name) before it.
        for info in sorted(host.plugins, key=lambda i: (i.name in BUILT_IN and not i.distribution, i.name)):
            version = f"{info.distribution} {info.version}" if info.distribution else "built in"
            detail = info.error or info.why
            status = f"{info.status}: {detail}" if detail else info.status
            shown = [t if t in offered_tools else f"{t} (disabled)" for t in info.tools]
            print(f"{info.name:<14} {version:<24} {status}" + (f"  tools: {', '.join(shown)}" if shown else ""))
        return 0
    if args.command == "call":
        return _call(host, args.tool, args.arguments)
    return _serve_http(host)


def _error(problem: object) -> int:
    console.error(problem)
    return USAGE


def _call(host: Host, tool: str, raw_arguments: str) -> int:
    from .call import UsageError, call, parse_arguments

    try:
        return call(host, tool, parse_arguments(raw_arguments, sys.stdin))
    except UsageError as exc:
        return _error(exc)
    except KeyboardInterrupt:
        return 130


def _new_plugin(name: str, parent: Path) -> int:
    from .scaffold import ScaffoldError, next_steps, render, replacements, uv_project

    try:
        made = render(name, parent)
    except (ScaffoldError, OSError) as exc:
        return _error(exc)
    print(f"fsmcp: wrote {made} (plugin {name}, distribution {replacements(name)['fsmcp-wordcount']}, tool {name})")
    project = uv_project()
    if project is not None:
        print(
            f"next, add it to the uv project {project}, whose environment this fsmcp runs in (its pyproject.toml then "
            "lists it, so uv sync there keeps it; a uv pip install would last until the next uv sync), and run its tests:"
        )
    else:
        print("next, install it into the environment this fsmcp runs in and run its tests (its README.md has every step):")
    for command in next_steps(made):
        print(f"  {command}")
    return 0


def _serve_stdio(settings: Settings) -> int:
    """Serve stdio; a configuration that started cleanly before answers from the cache (catalog.py)."""
    from ..run import catalog
    from ..paths import state as journal_place, temporaries

    try:
        # Before the cached catalog can answer for the host: the journal is checked at every start.
        roots = temporaries.start(settings)
    except ValueError as exc:
        return _error(exc)
    where = catalog.location(settings, roots)
    entry = None if journal_place.unfinished(settings) else catalog.load(where)
    if entry is None:
        from ..run.host import Host, HostError

        try:
            host = Host.start(settings, roots=roots)
        except HostError as exc:
            return _error(exc)
        if problem := _unservable(host):
            return _error(problem)
        line = f"serving {len(host.tools)} tools over stdio on {_described(host)}{_programs(host)}"
        if host.clean():
            catalog.store(where, {"tools": host.listing(), "instructions": host.instructions(), "line": line})
    else:
        from ..run.catalog import DeferredHost

        host, line = DeferredHost(settings, roots, entry, where), entry["line"]
    from ..serve.stdio import serve_stdio

    console.say(line)
    return _run(serve_stdio, host)


def _described(host: Host) -> str:
    return ", ".join(r.describe() for r in host.roots.operator)


def _unservable(host: Host) -> str | None:
    if host.settings.require_workspace and "set_workspace" not in host.tools:
        # Without the tool that lifts it, the requirement would refuse every call forever.
        return "--require-workspace needs the set_workspace tool (plugin fsmcp-workspace), which is not offered"
    return None


def _programs(host: Host) -> str:
    """The start-up line's word on confinement, when some offered tool starts programs or was withheld for it."""
    return f"; {host.sandbox.describe()}" if host.sandbox_notice or any(t.starts_programs for t in host.tools.values()) else ""


def _serve_http(host: Host) -> int:
    """HTTP (stdio starts in :func:`_serve_stdio`)."""
    from ..serve.http import HttpSetupError, listen, read_token, request_states, serve_http

    if problem := _unservable(host):
        return _error(problem)
    try:
        token = read_token(host.settings)
        states = request_states()
        listener = listen(host.settings)
    except HttpSetupError as exc:
        return _error(exc)
    if not listener.loopback:
        logging.getLogger("fsmcp").warning(
            "listening on %s, which other machines can reach; requests still need the token, but plain HTTP "
            "carries it in the clear: put a TLS reverse proxy in front (docs/http.md)",
            listener.address,
        )
    # Printed once the socket listens: from here on a client's request waits for the app, never fails.
    console.say(f"serving {len(host.tools)} tools over HTTP at {listener.url} on {_described(host)}{_programs(host)}")
    return _run(serve_http, host, token, listener, None, None, None, states)


def _serve_worker(settings: Settings, token: str, listener: Any, private: Any, place: Any, ready: int | None, life: int) -> int:
    """One of ``--workers``' processes (forked by :mod:`fsmcp.serve.workers`): the host loaded,
    the shared port and its private socket served until SIGTERM or its supervisor's end."""
    from ..run.host import Host, HostError

    try:
        host = Host.start(settings)
    except HostError as exc:
        return _error(exc)
    if problem := _unservable(host):
        return _error(problem)
    from ..serve.http import HttpSetupError, request_states, serve_http

    try:
        states = request_states()  # the key the supervisor made or found: every worker seals with it
    except HttpSetupError as exc:
        return _error(exc)
    if ready is not None:
        line = f"serving {len(host.tools)} tools over HTTP at {listener.url} on {_described(host)}{_programs(host)}"
        os.write(ready, line.encode())
        os.close(ready)
    return _run(serve_http, host, token, listener, place, private, life, states)


def _run(serve: Callable[..., Awaitable[None]], *args: Any) -> int:
    import asyncio

    try:
        # asyncio's own runner: anyio (a third of a start's imports when no bytecode is written)
        # is loaded by the first call that needs it, and works in any asyncio loop.
        asyncio.run(serve(*args))
    except KeyboardInterrupt:
        pass
    except BaseException as exc:
        if not _client_gone(exc):
            raise
        # The client closed the pipes: nobody is left to answer, so end quietly, and keep the
        # interpreter's last flush of stdout from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _client_gone(exc: BaseException) -> bool:
    import anyio

    if isinstance(exc, BaseExceptionGroup):
        return all(_client_gone(e) for e in exc.exceptions)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError, anyio.ClosedResourceError))
