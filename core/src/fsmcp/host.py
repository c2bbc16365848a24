"""The host: a typed facade over the plugin manager. Nothing else calls ``pm.hook``."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from . import journal_place, locks, temporaries
from .change import Change
from .audit import AuditLog
from .audit import note as audit_note
from .config import Settings
from .consent import Consent
from .context import ProgressSender, ToolContext
from .errors import ErrorCode, OffLoop, ToolError
from .order import ORDER
from .fs import FileSystem, os_error
from .invalid import describe_invalid
from .hotcalls import HotHook
from .mounts import LocalRoots
from .path_policy import NoPolicy, PathPolicy
from .programs import Sandbox
from .guard import Guard, Session, current_session, expect_version, in_session
from .locks import FileLocks
from .plugins import PluginError, PluginInfo, collect_tools, load_plugins, offered
from .journal import NAME as JOURNAL
from .results import Text, ToolResult
from .roots import Access, ResolvedPath, RootSet
from .tools import Tool
from .workers import WORKERS

if TYPE_CHECKING:
    import pluggy

log = logging.getLogger("fsmcp")


class HostError(Exception):
    """The server cannot start as configured; the message says what to change."""


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
        self.audit = AuditLog(settings.audit_log, settings.audit_log_max_bytes, settings.audit_log_keep) if settings.audit_log else None
        try:
            self.registered = collect_tools(pm, plugins, settings)
        except PluginError as exc:
            raise HostError(str(exc)) from None
        self.sandbox = Sandbox.of(settings)
        self.tools, self.sandbox_notice = self.sandbox.gate(offered(self.registered, settings))
        self.journal = pm.get_plugin(JOURNAL)
        self._format_hook = HotHook(pm.hook.fsmcp_format_result)
        self.local_roots = LocalRoots(r.path for r in roots.operator)
        self.in_flight: set[ToolContext] = set()
        """Calls whose tool is still running, including abandoned workers of cancelled calls."""
        self._listing: list[dict[str, Any]] | None = None
        self.warned = False
        """A plugin logged a warning while the host started."""
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
        """Plugins loaded and checked; ``roots``, when given, were made (and warned about) already."""
        if roots is None:
            try:
                roots, warnings = RootSet.from_specs(settings.roots, read_only=settings.read_only)
            except ValueError as exc:
                raise HostError(str(exc)) from None
            for warning in warnings:
                log.warning(warning)
        try:
            journal_place.prepare(settings, (r.path for r in roots.operator))
            temporaries.sweep([r.path for r in roots.operator], journal_place.kept(settings), read_only=settings.read_only)
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
                    f"plugins: {', '.join(sorted(p.name for p in self.plugins if p.status != 'default')) or '(none)'} "
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
        s = self.settings
        tool = self.registered.get(name)
        if tool is None:
            return None
        if s.read_only and not tool.annotations.read_only:
            return "the server is read-only (--read-only, or read_only = true in the configuration) and this tool changes files"
        if name in s.disable:
            return f"it is disabled (--disable {name}, or disable in the configuration)"
        if s.enable and name not in s.enable and tool.plugin not in s.enable:
            return f"the server offers only what enable names ({', '.join(s.enable)}), and neither {name} nor its plugin {tool.plugin!r}"
        if tool.starts_programs and self.sandbox_notice:
            return f"it starts programs, and this kernel cannot confine them (sandbox = {s.sandbox}; Landlock is missing)"
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

    # -- formatting ---------------------------------------------------------------------------

    def format(self, tool: Tool | None, outcome: ToolResult | ToolError) -> dict[str, Any]:
        """The ``CallToolResult`` as it goes on the wire (a formatter may also answer with the SDK's model)."""
        result = self._format_hook(tool=tool, outcome=outcome, format=self.settings.format, settings=self.settings)
        if isinstance(result, BaseModel):
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return result

    # -- calling ------------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        send_progress: ProgressSender | None = None,
        session: Session | None = None,
        asking: Consent | None = None,
        on_loop: bool = True,
    ) -> dict[str, Any]:
        """Run one tool call for ``session`` (one per client connection); every failure comes back as an ``isError`` result.

        ``asking``: the transport can put questions to the client's user (see :mod:`fsmcp.consent`).
        ``on_loop=False``: a quick tool goes straight to a worker thread (:meth:`call_now` found its work large).
        """
        tool = self.tools.get(name)
        if not self.settings.ask_user or tool is None or not tool.annotations.read_only:
            asking = None
        with in_session(session) as client:
            if self.audit is None:
                outcome = await self._consented(name, arguments, send_progress, asking, on_loop)
            else:
                with self.audit.recording(client.id, name, arguments) as line:
                    outcome = await self._consented(name, arguments, send_progress, asking, on_loop)
                    if isinstance(outcome, ToolError):
                        line["outcome"] = outcome.code.value
                    if asking is not None:
                        audit_note(**asking.audit())
                        if asking.waiting:  # the client gets the questions, not this outcome
                            line["outcome"] = "input_required"
        return self.format(tool, outcome)

    async def _consented(
        self, name: str, arguments: dict[str, Any] | None, send_progress: ProgressSender | None, asking: Consent | None, on_loop: bool
    ) -> ToolResult | ToolError:
        if asking is None:
            return await self.run_named(name, arguments, send_progress=send_progress, on_loop=on_loop)
        while True:  # bounded: each round asks at least once more, and a call asks at most MAX_ASKS times
            with asking.running():
                outcome = await self.run_named(name, arguments, send_progress=send_progress, on_loop=on_loop)
            if not await asking.settle():
                return outcome

    async def run_named(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        send_progress: ProgressSender | None = None,
        budget: int | None = None,
        on_loop: bool = True,
        caller: ToolContext | None = None,
    ) -> ToolResult | ToolError:
        tool = self.tools.get(name)
        if tool is None:
            return ToolError(ErrorCode.INVALID_PARAMS, self.unknown_tool(name))
        return await self.run(tool, arguments, send_progress=send_progress, budget=budget, on_loop=on_loop, caller=caller)

    async def run(
        self,
        tool: Tool,
        arguments: dict[str, Any] | None,
        *,
        send_progress: ProgressSender | None = None,
        budget: int | None = None,
        on_loop: bool = True,
        caller: ToolContext | None = None,
    ) -> ToolResult | ToolError:
        """Validate the arguments and run the tool; returns its result or the ToolError it met.

        A quick tool runs on the event loop when ``on_loop`` and the roots allow (:attr:`Tool.quick`).
        ``caller``: the call that runs this one (a batch's step adds to its caller's change)."""
        prepared = self._prepare(tool, arguments, send_progress, budget, caller)
        if isinstance(prepared, ToolError):
            return prepared
        args, ctx, own = prepared
        try:
            function = tool.resolve()
            if inspect.iscoroutinefunction(function):
                self.in_flight.add(ctx)
                try:
                    with self.guard.call(not tool.annotations.read_only, ctx):
                        if _expects(args):
                            await WORKERS.run(self._expect, args)
                        out = await function(args, ctx)
                except BaseException:
                    if own:
                        with anyio.CancelScope(shield=True):
                            await WORKERS.run(self._finish_failed, ctx.change)
                    raise
                finally:
                    ORDER.ended(ctx)
                    if own and not ctx.change.paths:
                        ORDER.changed(ctx.change)  # waited its turn (a snapshot), announced nothing: no _finish
                    self.in_flight.discard(ctx)
                if own and ctx.change.paths:
                    out = _noted(out, await WORKERS.run(self._finish, ctx.change, False))
            elif on_loop and tool.quick and self.local_roots():
                try:
                    out = self._on_loop(function, args, ctx, own)
                except OffLoop:
                    out = await self._in_worker(function, args, ctx, own)
            else:
                out = await self._in_worker(function, args, ctx, own)
        except anyio.get_cancelled_exc_class():
            ctx.cancel()  # the abandoned worker thread sees it at its next check
            raise
        except Exception as exc:
            return self._failure(tool, exc)
        return ToolResult.text(out) if isinstance(out, str) else out

    def call_now(self, name: str, arguments: dict[str, Any] | None, *, session: Session | None = None) -> dict[str, Any] | None:
        """A quick tool's call (:attr:`Tool.quick`) run to its end without awaiting, for a transport
        whose client has no user to ask (as :meth:`call` without ``asking``); None when it cannot
        be, and :meth:`call` serves it: another tool, roots not all local, an audit log to keep.
        Raises :class:`OffLoop` when the work turned out large: ``call(..., on_loop=False)`` serves it.
        """
        tool = self.tools.get(name)
        if tool is None or not tool.quick or self.audit is not None or not self.local_roots():
            return None
        try:
            function = tool.resolve()
        except Exception:
            return None  # call() answers with the import's failure
        if inspect.iscoroutinefunction(function):
            return None  # quick means a plain function: an async one is awaited by call()
        with in_session(session):
            prepared = self._prepare(tool, arguments, None, None, None)
            if isinstance(prepared, ToolError):
                outcome: ToolResult | ToolError = prepared
            else:
                args, ctx, own = prepared
                try:
                    out = self._on_loop(function, args, ctx, own)
                except OffLoop:
                    raise
                except Exception as exc:
                    out = self._failure(tool, exc)
                outcome = ToolResult.text(out) if isinstance(out, str) else out
        return self.format(tool, outcome)

    def _prepare(
        self, tool: Tool, arguments: dict[str, Any] | None, send_progress: ProgressSender | None, budget: int | None,
        caller: ToolContext | None,
    ) -> tuple[Any, ToolContext, bool] | ToolError:
        """The validated arguments, the call's context, and whether the call's change is its own."""
        try:
            args = tool.input_model.model_validate(arguments if arguments is not None else {})
        except ValidationError as exc:
            return ToolError(ErrorCode.INVALID_PARAMS, describe_invalid(tool, exc, arguments))
        # A tool another one runs (a batch's step) adds to its caller's change.
        change = caller.change if caller is not None and caller.change is not None else None
        ctx = ToolContext(
            fs=self.fs, settings=self.settings, tool=tool, tools=self.tools, send_progress=send_progress, run_tool=self.run_named,
            budget=budget, change=change or Change(tool.name, current_session().id, self._announce, self.path_policy.is_protected), journal=self.journal,
            protected=self.path_policy.protected, is_protected=self.path_policy.is_protected, unknown_tool=lambda name: self.unknown_tool(name, offers=False),
        )
        return args, ctx, change is None

    @staticmethod
    def _failure(tool: Tool, exc: Exception) -> ToolError:
        """What a call that raised ``exc`` answers."""
        if isinstance(exc, ToolError):
            return exc
        if isinstance(exc, (HostError, NoPolicy)):
            return ToolError(ErrorCode.INTERNAL_ERROR, str(exc))
        if isinstance(exc, OSError):
            return os_error(exc)
        log.exception("tool %s (plugin %s) failed", tool.name, tool.plugin, exc_info=exc)
        return ToolError(
            ErrorCode.INTERNAL_ERROR,
            f"{tool.name} failed unexpectedly ({type(exc).__name__}: {exc}); the server's log (stderr) has the details",
        )

    def _on_loop(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool) -> Any:
        """:meth:`_work` on the event loop; raises :class:`OffLoop` when the call is to run in a worker."""
        ctx.on_loop = True
        try:
            return self._work(function, args, ctx, own)
        finally:
            ctx.on_loop, ctx.loop_bytes = False, 0

    async def _in_worker(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool) -> Any:
        if not own:
            # A step of another call (a batch's): that call's change is finished only once this
            # step has returned, even abandoned by a cancellation (_work leaves at its end).
            ctx.change.join()
        return await WORKERS.run(self._work, function, args, ctx, own, not own)

    def _work(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool, joined: bool = False) -> Any:
        # Runs in a worker thread; an abandoned (cancelled) call stays in flight until it returns,
        # and its change is finished then.
        self.in_flight.add(ctx)
        try:
            try:
                with self.guard.call(not ctx.tool.annotations.read_only, ctx):
                    if _expects(args):
                        self._expect(args)
                    out = function(args, ctx)
            except BaseException:
                if own and ctx.change.paths:
                    self._finish(ctx.change, True)
                raise
            if own and ctx.change.paths:
                out = _noted(out, self._finish(ctx.change, False))
            return out
        finally:
            if own and not ctx.change.paths:
                ORDER.changed(ctx.change)  # waited its turn (a snapshot), announced nothing: no _finish
            self.in_flight.discard(ctx)
            if joined:
                ctx.change.leave()

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

    def _announce(self, change: Change, paths: list[ResolvedPath], call: ToolContext | None) -> None:
        # The announcing call's own file system: a hook that waits sees that call's cancellation (fs.call).
        fs = self.fs if call is None else call.fs
        self.pm.hook.fsmcp_before_change(change=change, paths=paths, fs=fs, settings=self.settings)

    def _finish_failed(self, change: Change) -> None:
        """A failed or cancelled call's change, once the steps it abandoned have returned: they may announce more."""
        change.settle()
        if change.paths:
            self._finish(change, True)

    def _finish(self, change: Change, failed: bool) -> list[str]:
        try:
            notes = self.pm.hook.fsmcp_after_change(change=change, failed=failed, fs=self.fs, settings=self.settings)
        except Exception:
            log.exception("a change hook failed after %s", change.tool)
            return []
        finally:
            ORDER.changed(change)
        return [note for note in notes if note]

    def _expect(self, args: Any) -> None:
        field = type(args).versioned
        raw = getattr(args, field)
        if isinstance(raw, list):  # a tool that takes several paths: the version of one of them
            if len(raw) != 1:
                raise ToolError(
                    ErrorCode.INVALID_PARAMS,
                    f"expectedVersion is one file's version: give {to_camel(field)} that one file, or leave expectedVersion out",
                )
            raw = raw[0]
        if raw is None:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"expectedVersion needs {to_camel(field)}: the file whose version it is")
        expect_version(self.fs, raw, args.expected_version)


def _expects(args: Any) -> bool:
    # Asked of the model's fields first: pydantic's lookup of a missing attribute is slow.
    return "expected_version" in type(args).model_fields and args.expected_version is not None


def _noted(out: Any, notes: list[str]) -> Any:
    if not notes:
        return out
    result = ToolResult.text(out) if isinstance(out, str) else out
    if isinstance(result, ToolResult):
        # Part of the result's text, not a block of its own: a client may join blocks with nothing between.
        note = " ".join(notes)
        last = result.parts[-1] if result.parts else None
        if isinstance(last, Text) and (text := last.text.rstrip()):
            between = "\n" if "\n" in text else " " if text.endswith(".") else ". "
            result.parts[-1] = Text(text + between + note)
        else:
            result.parts.append(Text(note))
    return result
