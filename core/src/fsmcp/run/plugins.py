"""Plugin loading and the tool registry.

Loading is a documented order: blocked names (``--disable`` of a plugin) → the host's
defaults → entry points in group ``fsmcp`` → plugins passed explicitly (tests) → a check that
every hook implementation matches a spec. A plugin that fails to import is reported on stderr
and skipped; the server still starts.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pluggy

from ..api import hookspecs
from ..api.config import Settings
from ..builtin import consent, json_format, roots_policy, text_format
from ..builtin.audit import NAME as AUDIT
from ..builtin.audit import Audit
from ..builtin.journal import NAME as JOURNAL
from ..builtin.journal import Journal
from ..builtin.secrets import NAME as SECRETS
from ..builtin.secrets import Secrets
from ..api.errors import ToolError
from ..api.hooks import PROJECT
from ..api.tools import Tool

log = logging.getLogger("fsmcp")

DEFAULT_PLUGINS = (("fsmcp.roots", roots_policy), ("fsmcp.text", text_format), ("fsmcp.json", json_format), (consent.NAME, consent))
BUILT_IN = frozenset({*(name for name, _ in DEFAULT_PLUGINS), SECRETS, JOURNAL, AUDIT})
"""The host's own plugins: each listed by ``fsmcp plugins``, whether it runs or not."""
_TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class PluginError(Exception):
    """The plugins cannot be put together (a duplicate tool name, a bad tool); fatal at start-up."""


@dataclass
class PluginInfo:
    name: str
    dist: Any = None
    """The ``importlib.metadata.Distribution`` that installed it, if any."""
    status: str = "enabled"
    """``enabled``, ``disabled`` (by the operator), ``failed`` (did not import) or ``default``."""
    error: str | None = None
    """Why it failed."""
    why: str | None = None
    """Why a built-in is disabled when the operator did not name it (the setting that turns it off)."""
    tools: list[str] = field(default_factory=list)

    # Read when shown: each parses the distribution's metadata, which start-up does not need.
    @cached_property
    def distribution(self) -> str | None:
        return self.dist.name if self.dist else None

    @cached_property
    def version(self) -> str | None:
        return self.dist.version if self.dist else None

    @property
    def label(self) -> str:
        dist = f"{self.distribution} {self.version}" if self.distribution else "built in"
        return f"{self.name!r} ({dist})"


def plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def load_plugins(
    settings: Settings,
    *,
    extra: Iterable[tuple[str, object]] = (),
    entry_points: bool = True,
) -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    pm = plugin_manager()
    infos: list[PluginInfo] = []
    for name in settings.disable:
        pm.set_blocked(name)
    for name, module in DEFAULT_PLUGINS:
        # Consent would be asked at every call only to say that it asks nobody.
        asks_nobody = module is consent and not settings.ask_user
        _built_in(pm, infos, name, lambda: None if asks_nobody else module, "ask_user = false (--no-ask)")
    _built_in(pm, infos, SECRETS, lambda: Secrets(settings), "")
    audit, audit_info = _built_in(pm, infos, AUDIT, lambda: Audit.for_settings(settings), "no audit_log (--audit-log FILE)", last=True)
    _built_in(pm, infos, JOURNAL, lambda: Journal.for_settings(settings), 'journal = "off" (--journal off)')
    if entry_points:
        infos.extend(_load_entry_points(pm, settings))
    for name, plugin in extra:
        info = PluginInfo(name)
        infos.append(info)
        if pm.is_blocked(name):
            info.status = "disabled"
            continue
        _register(pm, plugin, info)
    if audit is not None:
        if pm.has_plugin(AUDIT):
            audit_info.status, audit_info.why = "disabled", "replaced by a plugin of this name"
        else:
            # Registered last, its tryfirst wrapper is the outermost (pluggy calls the last registered
            # of a kind first): a tryfirst wrapper of another plugin that refuses the call is inside
            # it, and the log has the call's line however that wrapper ends it.
            pm.register(audit, name=AUDIT)
    _drop_unmatched_hooks(pm, infos)
    return pm, infos


def _built_in(pm: pluggy.PluginManager, infos: list[PluginInfo], name: str, make: Callable[[], Any], off: str, *, last: bool = False) -> tuple[Any, PluginInfo]:
    """The built-in ``name`` that ``make()`` builds (None where the setting ``off`` names turns it
    off, or configuration disabled it), and its line of ``fsmcp plugins``, added to ``infos``.
    Registered here, or by the caller when it is to come ``last``."""
    info = PluginInfo(name, status="default")
    infos.append(info)
    if pm.is_blocked(name):
        info.status = "disabled"
        return None, info
    made = make()
    if made is None:
        info.status, info.why = "disabled", off
    elif not last:
        pm.register(made, name=name)
    return made, info


def _register(pm: pluggy.PluginManager, plugin: object, info: PluginInfo) -> None:
    try:
        pm.register(plugin, name=info.name)
    except pluggy.PluginValidationError as exc:
        _fail(info, f"a hook implementation does not match its spec: {exc}")


def _drop_unmatched_hooks(pm: pluggy.PluginManager, infos: list[PluginInfo]) -> None:
    # A misspelt hook name would otherwise fail only when pluggy checks pending hooks, taking
    # the server down with it; a plugin with such a hook is dropped like one that fails to import.
    by_name = {info.name: info for info in infos}
    while True:
        try:
            pm.check_pending()
            return
        except pluggy.PluginValidationError as exc:
            name = pm.get_name(exc.plugin) or repr(exc.plugin)
            pm.unregister(exc.plugin)
            _fail(by_name.setdefault(name, PluginInfo(name)), str(exc))


def _fail(info: PluginInfo, error: str, headline: str = "was skipped") -> None:
    info.status, info.error = "failed", error
    log.warning("plugin %s %s: %s", info.label, headline, error)


_found: tuple[tuple[tuple[str, int | None], ...], list[Any]] | None = None


def _entry_points() -> list[Any]:
    """The entry points in group ``fsmcp``, looked up again only when the import path, or a
    directory on it, has changed since the last look (an install or removal changes its
    directory): a look reads every installed distribution's metadata, tens of ms, which a
    process that starts several hosts (the tests) would pay at each."""
    from importlib.metadata import entry_points  # loaded already by pluggy; the backport would cost 8 ms more

    global _found
    place = tuple((path, _changed(path)) for path in sys.path)
    if _found is None or _found[0] != place:
        _found = (place, list(entry_points(group=PROJECT)))
    return list(_found[1])


def _changed(path: str) -> int | None:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return None


def _load_entry_points(pm: pluggy.PluginManager, settings: Settings) -> list[PluginInfo]:
    found = _entry_points()
    # An --enable that names plugins only leaves the others unimported. A tool named in enable or
    # disable needs them all: which plugin registers a tool is known only once it is imported.
    enabled, names = set(settings.enable), {ep.name for ep in found}
    only = enabled if enabled and enabled <= names and set(settings.disable) <= names else None
    infos = []
    for ep in found:
        info = PluginInfo(ep.name, ep.dist)
        infos.append(info)
        if pm.is_blocked(ep.name) or (only is not None and ep.name not in only):
            info.status = "disabled"
            continue
        if pm.has_plugin(ep.name):
            _fail(info, "another plugin already has this name")
            continue
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken plugin must not take the server down
            _fail(info, f"{type(exc).__name__}: {exc}", "failed to import and was skipped")
            continue
        _register(pm, plugin, info)
    return infos


def collect_tools(pm: pluggy.PluginManager, infos: list[PluginInfo], settings: Settings) -> dict[str, Tool]:
    """Every registered tool, stamped with its plugin; duplicates are a PluginError naming both."""
    by_name = {info.name: info for info in infos}
    tools: dict[str, Tool] = {}
    # Called one implementation at a time so that each tool is stamped with the plugin that
    # registered it; pluggy's own call would hide which plugin called `register`.
    for impl in reversed(pm.hook.fsmcp_register_tools.get_hookimpls()):
        plugin = impl.plugin_name
        info = by_name.setdefault(plugin, PluginInfo(plugin))

        def register(tool: Tool, _plugin: str = plugin, _info: PluginInfo = info) -> None:
            if not isinstance(tool, Tool):
                raise PluginError(f"plugin {_info.label} registered {tool!r}, which is not an fsmcp.Tool")
            if not (callable(tool.function) or (isinstance(tool.function, str) and ":" in tool.function)):
                raise PluginError(f"plugin {_info.label} registered tool {tool.name!r} whose function is neither callable nor 'module:name'")
            if not _TOOL_NAME.match(tool.name):
                raise PluginError(f"plugin {_info.label} registered the tool name {tool.name!r}; names are 1-128 of A-Z a-z 0-9 . _ -")
            if tool.quick and not tool.annotations.read_only:
                raise PluginError(f"plugin {_info.label} registered tool {tool.name!r} as quick, which only a read-only tool may be")
            if tool.name in tools:
                other = by_name[tools[tool.name].plugin]
                raise PluginError(f"tool {tool.name!r} is registered by both plugin {other.label} and plugin {_info.label}; disable one of them (--disable NAME)")
            tool.plugin = _plugin
            tools[tool.name] = tool
            _info.tools.append(tool.name)

        kwargs = {"register": register, "settings": settings}
        try:
            impl.function(**{k: v for k, v in kwargs.items() if k in impl.argnames})
        except ToolError as exc:
            # A plugin refuses its own [plugins.<name>] options (fsmcp.options_error) at start-up.
            raise PluginError(f"plugin {info.label}: {exc.message}") from None
    return tools


def offered(tools: dict[str, Tool], settings: Settings) -> dict[str, Tool]:
    """The tools the operator enabled (:func:`withheld` withholds none of them), sorted by name."""
    return {name: tool for name, tool in sorted(tools.items()) if withheld(tool, settings) is None}


def withheld(tool: Tool, settings: Settings) -> str | None:
    """Why the operator's settings withhold ``tool``, or None: ``enable`` (if given) admits, ``disable`` removes.

    Under ``read_only`` a tool that can only change files is not offered: one that stays (such
    as a batch of reads) registers ``READ_ONLY`` annotations when ``settings.read_only``.
    """
    enable, name = settings.enable, tool.name
    if settings.read_only and not tool.annotations.read_only:
        return "the server is read-only (--read-only, or read_only = true in the configuration) and this tool changes files"
    if name in settings.disable or tool.plugin in settings.disable:
        return f"it is disabled (--disable {name}, or disable in the configuration)"
    if enable and name not in enable and tool.plugin not in enable:
        return f"the server offers only what enable names ({', '.join(enable)}), and neither {name} nor its plugin {tool.plugin!r}"
    return None
