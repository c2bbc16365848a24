"""``fsmcp serve``, ``fsmcp tools``, ``fsmcp plugins``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from .config import ConfigError, Settings, build_settings, load_toml


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("roots", nargs="*", metavar="DIR[:ro]", help="allowed root directories (default: the current directory); DIR:ro makes one read-only")
    common.add_argument("--config", type=Path, metavar="FILE", help="a TOML file with the same settings (command-line options win)")
    common.add_argument("--read-only", action="store_true", default=None, help="refuse every change, in every root (READ_ONLY)")
    common.add_argument("--enable", action="extend", type=_names, metavar="NAME[,NAME]", help="offer only these plugins or tools (repeatable)")
    common.add_argument("--disable", action="extend", type=_names, metavar="NAME[,NAME]", help="do not offer these plugins or tools (repeatable)")
    common.add_argument("--format", metavar="NAME", help="result format (default: text)")
    common.add_argument("--policy", metavar="NAME", help="path policy: roots (default) or workspace (relative paths only, plugin fsmcp-workspace)")
    common.add_argument("--require-workspace", action="store_true", default=None, help="refuse every path until the client calls set_workspace")
    common.add_argument("--budget", type=int, metavar="CHARS", help="the most text characters one result carries (default: 80000)")
    common.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")

    parser = argparse.ArgumentParser(prog="fsmcp", description="A plugin-based MCP server for safe file tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", parents=[common], help="run the MCP server over stdio")
    sub.add_parser("tools", parents=[common], help="list the tools this configuration offers")
    sub.add_parser("plugins", parents=[common], help="list installed plugins, versions, status and tools")
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    file_values: dict[str, Any] = load_toml(args.config) if args.config else {}
    cli_values = {
        "roots": args.roots,
        "read_only": args.read_only,
        "enable": args.enable,
        "disable": args.disable,
        "format": args.format,
        "policy": args.policy,
        "require_workspace": args.require_workspace,
        "budget": args.budget,
    }
    return build_settings(file_values, cli_values)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # stdout belongs to the protocol: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="fsmcp %(levelname)s %(name)s: %(message)s")
    from .host import Host, HostError

    try:
        host = Host.start(settings_from_args(args))
    except (ConfigError, HostError) as exc:
        print(f"fsmcp: error: {exc}", file=sys.stderr)
        return 2

    if args.command == "tools":
        for tool in host.tools.values():
            print(f"{tool.name:<28} {tool.plugin}")
        return 0
    if args.command == "plugins":
        offered_tools = set(host.tools)
        for info in sorted(host.plugins, key=lambda i: (i.status == "default", i.name)):
            version = f"{info.distribution} {info.version}" if info.distribution else "built in"
            status = info.status if not info.error else f"{info.status}: {info.error}"
            shown = [t if t in offered_tools else f"{t} (disabled)" for t in info.tools]
            print(f"{info.name:<14} {version:<24} {status}" + (f"  tools: {', '.join(shown)}" if shown else ""))
        return 0

    if host.settings.require_workspace and "set_workspace" not in host.tools:
        # Without the tool that lifts it, the requirement would refuse every call forever.
        print("fsmcp: error: --require-workspace needs the set_workspace tool (plugin fsmcp-workspace), which is not offered", file=sys.stderr)
        return 2

    import anyio

    from .server import serve_stdio

    roots = ", ".join(r.describe() for r in host.roots.operator)
    print(f"fsmcp: serving {len(host.tools)} tools over stdio on {roots}", file=sys.stderr)
    try:
        anyio.run(serve_stdio, host)
    except KeyboardInterrupt:
        pass
    return 0
