"""The host: a typed facade over the plugin manager. Nothing else but its call runner (runner.py) calls ``pm.hook``."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..paths import locks, temporaries
from ..api.config import Settings
from ..api.errors import HostError, ToolError
from ..paths.fs import FileSystem
from ..sandbox.programs import Sandbox
from ..paths.policy import NoPolicy, PathPolicy
from ..paths.guard import Guard
from ..paths.locks import FileLocks
from .plugins import BUILT_IN, PluginError, PluginInfo, collect_tools, load_plugins, offered, withheld
from ..builtin.journal import NAME as JOURNAL
from ..api.tools import ToolResult
from ..paths.roots import Access, LocalRoots, RootSet
from .runner import CallRunner, HotHook

if TYPE_CHECKING:
    import pluggy

log = logging.getLogger("fsmcp")


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = False

    def emit(self, record: logging.LogRecord) -> None:
        self.seen = True


def _file_locks(roots: RootSet) -> FileLocks | None:
    if not locks.SUPPORTED:
        return None
    directory = locks.lock_dir()
    for root in roots.operator:
        if directory.is_relative_to(root.path):
            # Not refused: the file holds nothing, and what a tool or program can do to it
            # (delete it: servers started after no longer wait for those started before) it can
            # do as well by writing the roots' files without any lock.
            log.warning(
                "the lock directory %s lies inside the root %s: a tool or program that removes it makes servers "
                "started afterwards not wait for those started before; set XDG_STATE_HOME outside every root",
                directory, root.path,
            )  # fmt: skip
    try:
        return FileLocks(locks.prepare())
    except ValueError as exc:
        raise HostError(str(exc)) from None


class Host:
    """Plugins, settings, roots and tools, put together once at start-up."""

    def __init__(self, settings: Settings, pm: pluggy.PluginManager, plugins: list[PluginInfo], roots: RootSet):
        self.settings = settings
        self.pm = pm
        self.plugins = plugins
        self.roots = roots
        self.guard = Guard(stale_guard=settings.stale_guard, files=_file_locks(roots))
        self.path_policy = PathPolicy(
            roots, settings,
            resolve_hook=HotHook(pm.hook.fsmcp_resolve_path), check_hook=HotHook(pm.hook.fsmcp_check_path),
            protected_globs=pm.hook.fsmcp_protected_globs,
        )  # fmt: skip
        self.fs = FileSystem(self.path_policy, settings.max_file_bytes, guard=self.guard)
        try:
            self.registered = collect_tools(pm, plugins, settings)
        except PluginError as exc:
            raise HostError(str(exc)) from None
        self.sandbox = Sandbox.of(settings)
        self.tools, self.sandbox_notice = self.sandbox.gate(offered(self.registered, settings))
        self.journal = pm.get_plugin(JOURNAL)
        self.local_roots = LocalRoots(r.path for r in roots.operator)
        self._listing: list[dict[str, Any]] | None = None
        self.warned = False
        """A plugin logged a warning while the host started."""
        self.runner = CallRunner(self)
        self._probe()

    @classmethod
    def start(
        cls,
        settings: Settings,
        *,
        extra_plugins: Iterable[tuple[str, object]] = (),
        entry_points: bool = True,
        roots: RootSet | None = None,
    ) -> Host:
        """Plugins loaded and checked. ``roots``, when given, were made (and warned about) already,
        and the journal's place checked and a killed server's temporaries swept, as ``fsmcp serve``
        on stdio does before its cached tool list answers (once a start is enough)."""
        if roots is None:
            try:
                roots = temporaries.start(settings)
            except ValueError as exc:
                raise HostError(str(exc)) from None
        # A plugin that warns while it loads or registers (a program it needs is missing) makes
        # the start one not to keep for the next (catalog.py), which would start without saying it.
        said = _Warnings()
        logging.getLogger().addHandler(said)
        try:
            pm, plugins = load_plugins(settings, extra=extra_plugins, entry_points=entry_points)
            host = cls(settings, pm, plugins, roots)
        finally:
            logging.getLogger().removeHandler(said)
        host.warned = said.seen
        host._check_names()
        host._recover()
        if host.sandbox_notice:
            log.warning(host.sandbox_notice)
        if not host.tools:
            log.warning(
                "no tool is offered; install plugins into the environment fsmcp runs in "
                "(such as pip install fsmcp-read fsmcp-write), and see fsmcp plugins for what is installed and enabled"
            )
        return host

    def _probe(self) -> None:
        try:
            self.path_policy.ask(".", Access.READ, True)
        except NoPolicy as exc:
            raise HostError(str(exc)) from None
        except ToolError:
            pass  # the policy answered, if only to refuse
        if self.pm.hook.fsmcp_format_result(tool=None, outcome=ToolResult(), format=self.settings.format, settings=self.settings) is None:
            raise HostError(f"no installed plugin provides the result format {self.settings.format!r}")

    def _check_names(self) -> None:
        # A misspelt name would silently offer too much (disable) or nothing (enable), or drop
        # the options of a [plugins.NAME] table (a [plugins.secret] adds no protected name).
        # A disabled or failed plugin is installed all the same: its table is known.
        tables = {p.name for p in self.plugins}
        unknown_tables = [n for n in self.settings.plugins if n not in tables]
        if unknown_tables:
            raise HostError(
                f"fsmcp.toml has a [plugins.{unknown_tables[0]}] table, but no installed plugin is named {unknown_tables[0]!r}; "
                f"plugin tables: {', '.join(sorted(n for n in tables if not n.startswith('fsmcp.')))} (fsmcp plugins lists the plugins)"
            )
        # A plugin reads its table at start-up (writing-plugins.md): one that did not takes no
        # options, and its table would be dropped without a word. A disabled one was not asked.
        for info in self.plugins:
            keys = self.settings.plugins.get(info.name)
            if keys and info.status in ("enabled", "default") and info.name not in self.settings.asked:
                raise HostError(
                    f"fsmcp.toml's [plugins.{info.name}] has {', '.join(keys)}, but plugin {info.label} takes no options "
                    "(it did not read its table at start-up); remove the table"
                )
        known = tables | set(self.registered)
        for option in ("enable", "disable"):
            unknown = [n for n in getattr(self.settings, option) if n not in known]
            if unknown:
                raise HostError(
                    f"{option} names {', '.join(map(repr, unknown))}, which is no installed plugin or tool; "
                    f"plugins: {', '.join(sorted(p.name for p in self.plugins if p.name not in BUILT_IN)) or '(none)'} "
                    "(fsmcp plugins lists them with their tools)"
                )

    def unknown_tool(self, name: str, offers: bool = True) -> str:
        """What a call of ``name``, which this server does not offer, is told: why, when the
        operator withheld it; else (with ``offers``) what the server offers instead."""
        why = self._why_withheld(name)
        if why is not None:
            return f"unknown tool {name!r}: it is not offered because {why}; only the operator can change that, by restarting the server"
        text = f"unknown tool {name!r}; this server offers: {', '.join(self.tools) or '(none)'}" if offers else f"unknown tool {name!r}"
        # A plugin the operator left out is never imported, not even to learn its tools' names:
        # disabling one means its code does not run here. So the call is told which are left out.
        left_out = [i.name for i in self.plugins if i.status == "disabled" and not i.name.startswith("fsmcp.")]
        if left_out:
            how = f"enable names only {', '.join(self.settings.enable)}" if self.settings.enable else "disabled"
            which = f"the plugin {left_out[0]} is" if len(left_out) == 1 else f"the plugins {', '.join(left_out)} are"
            text += f"; {which} not loaded ({how}): only the operator can change that, by restarting the server"
        return text

    def _why_withheld(self, name: str) -> str | None:
        tool = self.registered.get(name)
        if tool is None:
            return None
        if why := withheld(tool, self.settings):
            return why
        if tool.starts_programs and self.sandbox_notice:
            return f"it starts programs, and this kernel cannot confine them (sandbox = {self.settings.sandbox}; Landlock is missing)"
        return None

    def listing(self) -> list[dict[str, Any]]:
        """The tools as ``tools/list`` sends them (computed once: the list never changes)."""
        if self._listing is None:
            self._listing = [tool.wire(self.tools) for tool in self.tools.values()]
        return self._listing

    def clean(self) -> bool:
        """Whether the start met nothing worth a warning: only such a start is kept for the next."""
        return bool(self.tools) and not self.sandbox_notice and not self.warned and all(info.status != "failed" for info in self.plugins)

    def instructions(self) -> str:
        """What the server tells a client when it connects."""
        roots = "; ".join(r.describe() for r in self.roots.operator)
        read_only = " The server is read-only: every change is refused (READ_ONLY)." if self.settings.read_only else ""
        return (
            f"File tools over these directories: {roots} (a client's MCP roots can narrow them, never widen them).{read_only} "
            f"Relative paths resolve against the workspace, at first {self.roots.operator[0].path}. "
            "Failures lead with a code (NOT_FOUND, ACCESS_DENIED, ...) and say what to do next."
        )

    # -- changes ------------------------------------------------------------------------------

    def _recover(self) -> None:
        """Before any call: finish the changes a process that died mid-call left (journal.py)."""
        if self.journal is None:
            return
        try:
            for line in self.journal.recover(self.fs):
                log.warning(line)
        except OSError as exc:
            log.warning("the journal %s could not finish the changes of calls cut short (%s); undo_change may miss them", self.journal.dir, exc.strerror or exc)
