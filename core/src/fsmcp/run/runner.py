"""The call runner: the one road every tool call takes, from stdio or HTTP, on the event loop or in a worker thread.

A call's steps are: validate the arguments → make the call's context → enter the guard (and check
``expectedVersion``) → run the tool's function → finish the change (``fsmcp_after_change``, its
notes) → format the result. They are written once, in :meth:`CallRunner._steps`, a coroutine
that hands each step that may block to a :class:`_Road`:

- an async tool runs on the event loop: its function is awaited, and the steps that touch files
  (``expectedVersion``, finishing the change) go to a worker thread;
- a plain tool runs where it is, on the event loop (a quick one, :attr:`Tool.quick`, until it
  meets more work than a moment's: :class:`~fsmcp.api.errors.OffLoop`) or in its worker thread:
  every step is called directly, nothing in the coroutine waits, and :func:`_drive` runs it to
  its end in one step.

Around the steps, the plugins that implement ``fsmcp_around_call`` (the audit log, consent)
wrap each call a client made, asked once a call; a call none of them wraps may be answered
without a task of its own (:meth:`CallRunner.call_now`, stdio's fast path).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from ..builtin.consent import NAME as CONSENT
from ..paths.change import ORDER, Change, read_only_refusal
from .context import ProgressSender, ToolContext
from ..api.audit import noting
from ..api.errors import ErrorCode, HostError, OffLoop, ToolError
from ..paths.fs import os_error
from ..paths.policy import NoPolicy
from ..paths.guard import Session, current_session, expect_version, in_session
from ..api.invalid import describe_invalid
from ..paths.roots import ResolvedPath
from ..api.tools import Text, Tool, ToolResult
from .workers import WORKERS

if TYPE_CHECKING:
    from pluggy import HookCaller, PluginManager

    from ..paths.consent import Consent
    from .host import Host

log = logging.getLogger("fsmcp")

Outcome = ToolResult | ToolError
Around = Callable[[Callable[[], Awaitable[Outcome]]], Awaitable[Outcome]]
"""What an ``fsmcp_around_call`` implementation returns: given the rest of the call, its outcome."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a client made, as ``fsmcp_around_call`` sees it."""

    name: str
    """The tool's name as the client sent it."""
    arguments: dict[str, Any] | None
    """The arguments as the client sent them (not yet validated)."""
    tool: Tool | None
    """The tool, or None when this server offers none of that name."""
    session: str
    """The client connection's session id (one per connection)."""
    asking: Consent | None
    """How the transport can put questions to the client's user, or None when it cannot."""
    notes: dict[str, Any] = field(default_factory=dict)
    """Fields for the call's audit line (:meth:`note`)."""
    changed: list[str] = field(default_factory=list)
    """The paths the call changed, as its change announced them (for the audit line's ``paths``)."""
    refused: int | None = None
    """The JSON-RPC error code the transport answered the call with before any tool ran (its
    params malformed, or sent before ``initialize``), or None. Such a call is wrapped as any
    other, ``run()`` answers it with an ``INVALID_PARAMS`` error, and the client gets the
    transport's error whatever the wrappers return."""

    def note(self, **fields: Any) -> None:
        """Add fields to the call's audit line, as ``fsmcp.audit_note`` does from the call's own code.

        A wrapper notes through the call, not ``audit_note``: it may run where the call's context is not."""
        self.notes.update(fields)


@dataclass(frozen=True, slots=True)
class NotNow:
    """A call :meth:`CallRunner.call_now` begun and did not answer: what :meth:`CallRunner.call` goes on with."""

    call: ToolCall
    arounds: list[Around]
    """What the plugins' ``fsmcp_around_call`` answered for ``call`` (asked once a call)."""
    on_loop: bool
    """False: the tool met more work than a moment's on the event loop; it runs in a worker thread."""


class CallRunner:
    """Runs the tool calls of one host."""

    def __init__(self, host: Host):
        self.host = host
        self.in_flight: set[ToolContext] = set()
        """Calls whose tool is still running, including abandoned workers of cancelled calls."""
        self._around = HotHook(host.pm.hook.fsmcp_around_call, failed=_stops_the_call)
        # Consent wraps only a call whose client can be asked: the others do not enter it.
        consent = host.pm.get_plugin(CONSENT)
        self._around_unasked = (
            self._around if consent is None else HotHook(host.pm.hook.fsmcp_around_call, without=consent, pm=host.pm, failed=_stops_the_call)
        )
        # The formatter is the server's, chosen once: by the hook's contract only the one the
        # format setting names answers (an empty result, as the host's start-up probe asks).
        settings = host.settings
        self._formatter = chosen(host.pm.hook.fsmcp_format_result, tool=None, outcome=ToolResult(), format=settings.format, settings=settings)

    # -- a client's call ----------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        send_progress: ProgressSender | None = None,
        session: Session | None = None,
        asking: Consent | None = None,
        not_now: NotNow | None = None,
    ) -> dict[str, Any]:
        """Run one tool call for ``session`` (one per client connection); every failure comes back as an ``isError`` result.

        ``asking``: the transport can put questions to the client's user (see :mod:`fsmcp.paths.consent`).
        ``not_now``: what :meth:`call_now` learnt of this same call (its wrappers are not asked again).
        """
        tool = self.host.tools.get(name)
        with in_session(session) as client:
            if not_now is None:
                call = ToolCall(name, arguments, tool, client.id, asking)
                arounds = (self._around if asking is not None else self._around_unasked)(call=call, settings=self.host.settings)
                on_loop = True
            else:
                call, arounds, on_loop = not_now.call, not_now.arounds, not_now.on_loop
            if not arounds:
                return self.format(tool, await self.run(name, arguments, send_progress=send_progress, on_loop=on_loop))
            # The client's view of the roots, its session and the call's audit notes travel in
            # context variables. A wrapper may run the rest of the call in another task (a queue, a
            # timeout helper), whose context holds none of them: the call itself enters them again,
            # so no wrapper makes it skip the roots or lose what it notes.
            view = self.host.roots.view

            async def run() -> Outcome:
                with in_session(client), self.host.roots.viewing(view), noting(call.notes, call.changed):
                    return await self.run(name, arguments, send_progress=send_progress, on_loop=on_loop)

            # The outcome is formatted inside the outermost wrapper (the audit log's): a formatter
            # that fails ends the call with the transport's internal error, and the wrapper sees
            # that, not the outcome it would have had.
            formatted: list[Any] = []

            async def formatting(inner: Callable[[], Awaitable[Outcome]]) -> Outcome:
                outcome = await inner()
                formatted[:] = outcome, self.format(tool, outcome)
                return outcome

            with noting(call.notes, call.changed):
                outcome = await arounds[0](partial(formatting, _chained(arounds[1:], run)))
            if formatted and formatted[0] is outcome:
                return formatted[1]
        return self.format(tool, outcome)  # the outermost wrapper's own answer (or none)

    async def refused(self, name: Any, arguments: Any, code: int, message: str, *, session: Session | None = None) -> None:
        """A tools/call the transport refused with the JSON-RPC error ``code`` before any tool ran:
        the wrappers see it as a call (:attr:`ToolCall.refused`), so that it has its audit line.
        The client's answer is the transport's; a wrapper's failure is only logged."""
        name = name if isinstance(name, str) else ""
        with in_session(session) as client:
            call = ToolCall(name, arguments if isinstance(arguments, dict) else None, self.host.tools.get(name), client.id, None, refused=code)
            try:
                arounds = self._around(call=call, settings=self.host.settings)
                if not arounds:
                    return

                async def run() -> Outcome:
                    return ToolError(ErrorCode.INVALID_PARAMS, message)

                with noting(call.notes, call.changed):
                    await _chained(arounds, run)()
            except Exception:
                log.exception("a wrapper (fsmcp_around_call) failed on a tools/call the transport refused")

    def call_now(self, name: str, arguments: dict[str, Any] | None, *, session: Session | None = None) -> dict[str, Any] | NotNow | None:
        """A quick tool's call (:attr:`Tool.quick`) run to its end without awaiting, for a transport
        whose client has no user to ask (as :meth:`call` without ``asking``). None when it cannot
        be and nothing was asked (another tool, roots not all local): :meth:`call` serves it. A
        :class:`NotNow` when the call was begun and is to go on in :meth:`call` (``not_now=``):
        a plugin wraps it (``fsmcp_around_call``: an audit log to keep), or its work turned out
        large (it runs in a worker thread). The wrappers are asked once a call, here or there.
        """
        tool = self.host.tools.get(name)
        if tool is None or not tool.quick or not self.host.local_roots():
            return None
        with in_session(session) as client:
            call = ToolCall(name, arguments, tool, client.id, None)
            if arounds := self._around_unasked(call=call, settings=self.host.settings):
                return NotNow(call, arounds, True)
            try:
                outcome = _drive(self.run(name, arguments, now=True))
            except OffLoop:
                return NotNow(call, arounds, False)
        return self.format(tool, outcome)

    def format(self, tool: Tool | None, outcome: Outcome) -> dict[str, Any]:
        """The ``CallToolResult`` as it goes on the wire (a formatter may also answer with the SDK's model)."""
        settings = self.host.settings
        result = self._formatter(tool=tool, outcome=outcome, format=settings.format, settings=settings)
        if isinstance(result, BaseModel):
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return result

    # -- a tool's run -------------------------------------------------------------------------

    async def run(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        send_progress: ProgressSender | None = None,
        budget: int | None = None,
        on_loop: bool = True,
        caller: ToolContext | None = None,
        now: bool = False,
    ) -> Outcome:
        """Validate the arguments and run the tool ``name``; returns its result or the ToolError it met.

        A quick tool runs on the event loop when ``on_loop`` and the roots allow (:attr:`Tool.quick`).
        ``caller``: the call that runs this one (a batch's step adds to its caller's change).
        ``now``: :meth:`call_now`'s run, which never waits: it raises :class:`OffLoop` where a
        worker thread or the tool's coroutine would be awaited."""
        tool = self.host.tools.get(name)
        if tool is None:
            return ToolError(ErrorCode.INVALID_PARAMS, self.host.unknown_tool(name))
        if caller is not None and caller.tool.annotations.read_only and not tool.annotations.read_only:
            # Held to its word as its own changes are (paths.change.refuse_read_only): its call has
            # no change the other's could add to, and no journal would record it.
            return read_only_refusal(caller.tool, f"run {name}, which changes files")
        prepared = self._prepare(tool, arguments, send_progress, budget, caller)
        if isinstance(prepared, ToolError):
            return prepared
        args, ctx, own = prepared
        try:
            function = tool.resolve()
            if inspect.iscoroutinefunction(function):
                if now:
                    raise OffLoop
                out = await self._steps(function, args, ctx, own, AWAITED)
            elif on_loop and tool.quick and self.host.local_roots():
                try:
                    out = self._on_loop(function, args, ctx, own)
                except OffLoop:
                    if now:
                        raise
                    out = await self._in_worker(function, args, ctx, own)
            else:
                out = await self._in_worker(function, args, ctx, own)
        except anyio.get_cancelled_exc_class():
            ctx.cancel()  # the abandoned worker thread sees it at its next check
            raise
        except Exception as exc:
            if now and isinstance(exc, OffLoop):
                raise
            return self._failure(tool, exc)
        return _result(out)

    def _prepare(
        self, tool: Tool, arguments: dict[str, Any] | None, send_progress: ProgressSender | None, budget: int | None,
        caller: ToolContext | None,
    ) -> tuple[Any, ToolContext, bool] | ToolError:
        """The validated arguments, the call's context, and whether the call's change is its own.

        A read-only tool's call changes nothing: it has no change (``ctx.change`` is None) and no
        change hook is entered for it, unless another call runs it (a batch's step adds to its
        caller's change)."""
        try:
            args = tool.input_model.model_validate(arguments if arguments is not None else {})
        except ValidationError as exc:
            return ToolError(ErrorCode.INVALID_PARAMS, describe_invalid(tool, exc, arguments))
        host = self.host
        # A tool another one runs (a batch's step) adds to its caller's change.
        change = caller.change if caller is not None and caller.change is not None else None
        own = change is None
        if own and not tool.annotations.read_only:
            change = Change(tool.name, current_session().id, self._announce, host.path_policy.is_protected)
        ctx = ToolContext(
            fs=host.fs, settings=host.settings, tool=tool, tools=host.tools, send_progress=send_progress, run_tool=self.run,
            budget=budget, change=change, journal=host.journal,
            protected=host.path_policy.protected, is_protected=host.path_policy.is_protected, unknown_tool=lambda name: host.unknown_tool(name, offers=False),
        )
        return args, ctx, own

    def _on_loop(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool) -> Any:
        """A plain tool's steps on the event loop; raises :class:`OffLoop` when the call is to run in a worker."""
        ctx.on_loop = True
        try:
            return _drive(self._steps(function, args, ctx, own, INLINE))
        finally:
            ctx.on_loop, ctx.loop_bytes = False, 0

    async def _in_worker(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool) -> Any:
        if not own:
            # A step of another call (a batch's): that call's change is finished only once this
            # step has returned, even abandoned by a cancellation (_in_thread leaves at its end).
            ctx.change.join()
        return await WORKERS.run(self._in_thread, function, args, ctx, own)

    def _in_thread(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool) -> Any:
        # An abandoned (cancelled) call runs on here until its tool returns; its change is finished then.
        try:
            return _drive(self._steps(function, args, ctx, own, INLINE))
        finally:
            if not own:
                ctx.change.leave()

    async def _steps(self, function: Callable[..., Any], args: Any, ctx: ToolContext, own: bool, road: _Road) -> Any:
        """Guard, ``expectedVersion``, the tool, the change finished: every call's steps, once."""
        self.in_flight.add(ctx)
        own = own and ctx.change is not None  # a read-only call's: nothing to finish
        try:
            # The change is finished (the journal reads what the call left) while the call still
            # holds its files' locks: after them, another call's write (this process's or another's)
            # would be taken for this one's, and a failed call that wrote nothing journaled.
            with self.host.guard.call(not ctx.tool.annotations.read_only, ctx):
                try:
                    if _expects(args):
                        await road.blocking(self._expect, args)
                    out = await road.tool(function, args, ctx)
                except BaseException:
                    if own:
                        await road.finishing(self._finish_failed, ctx.change)
                    raise
                if own and ctx.change.paths:
                    out = _noted(out, await road.blocking(self._finish, ctx.change, False))
                    if isinstance(out, ToolResult) and isinstance(out.data, dict) and "changeId" in out.data:
                        out.data["changeId"] = ctx.change.number  # known only once the journal has kept it
            return out
        finally:
            if ctx.ordered:
                ORDER.ended(ctx)
            if own and not ctx.change.paths:
                ORDER.changed(ctx.change)  # waited its turn (a snapshot), announced nothing: no _finish
            self.in_flight.discard(ctx)

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

    # -- the call's change --------------------------------------------------------------------

    def _announce(self, change: Change, paths: list[ResolvedPath], call: ToolContext | None) -> None:
        # The announcing call's own file system: a hook that waits sees that call's cancellation (fs.call).
        host = self.host
        fs = host.fs if call is None else call.fs
        host.pm.hook.fsmcp_before_change(change=change, paths=paths, fs=fs, settings=host.settings)

    def _finish_failed(self, change: Change) -> None:
        """A failed or cancelled call's change, once the steps it abandoned have returned: they may announce more."""
        change.settle()
        if change.paths:
            self._finish(change, True)

    def _finish(self, change: Change, failed: bool) -> list[str]:
        host = self.host
        try:
            notes = host.pm.hook.fsmcp_after_change(change=change, failed=failed, fs=host.fs, settings=host.settings)
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
        expect_version(self.host.fs, raw, args.expected_version)


@dataclass(frozen=True, slots=True)
class _Road:
    """How :meth:`CallRunner._steps` runs the tool and the steps that may block."""

    tool: Callable[[Callable[..., Any], Any, ToolContext], Awaitable[Any]]
    blocking: Callable[..., Awaitable[Any]]
    finishing: Callable[..., Awaitable[Any]]
    """A failed call's change: finished even when the call is being cancelled."""


async def _call(function: Callable[..., Any], *args: Any) -> Any:
    return function(*args)


async def _await(function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return await function(*args)


async def _shielded(function: Callable[..., Any], *args: Any) -> Any:
    with anyio.CancelScope(shield=True):
        return await WORKERS.run(function, *args)


INLINE = _Road(tool=_call, blocking=_call, finishing=_call)
"""A plain tool, in the thread it runs in (the event loop's or a worker's): nothing waits."""
AWAITED = _Road(tool=_await, blocking=WORKERS.run, finishing=_shielded)
"""An async tool, on the event loop: what touches files goes to a worker thread."""


def _drive(steps: Coroutine[Any, Any, Any]) -> Any:
    """Run ``steps`` on the :data:`INLINE` road to its end, at once: nothing in it waits."""
    try:
        steps.send(None)
    except StopIteration as stop:
        return stop.value
    steps.close()
    raise RuntimeError("a call's steps waited on the inline road")


def _chained(arounds: list[Around], run: Callable[[], Awaitable[Outcome]]) -> Callable[[], Awaitable[Outcome]]:
    """``run`` inside the wrappers ``arounds``: the implementation pluggy calls first is the outermost, it sees the call first."""
    for around in reversed(arounds):
        run = partial(around, run)
    return run


def _result(out: Any) -> Any:
    return ToolResult.text(out) if isinstance(out, str) else out


def _expects(args: Any) -> bool:
    # Asked of the model's fields first: pydantic's lookup of a missing attribute is slow.
    return "expected_version" in type(args).model_fields and args.expected_version is not None


def _noted(out: Any, notes: list[str]) -> Any:
    if not notes:
        return out
    result = _result(out)
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


# -- the hooks every call asks, called without pluggy's general machinery -------------------
#
# The path policy and the path vetoes are asked for every path a call names, the call's wrappers
# and the result format once a call: pluggy's call checks the arguments against the spec and runs a loop ready for
# wrappers, together more than the default implementations cost. A :class:`HotHook` calls the
# plain implementations itself, in pluggy's order and with its result rules (the first non-None
# answer for a ``firstresult`` hook, else every non-None answer); it hands the call to pluggy
# when an implementation is a wrapper, and notices a plugin registered or removed since.


class HotHook:
    """Calls ``caller``'s implementations as described above; with ``without``, every one but that
    plugin's (``pm``: the plugin manager, whose caller of the others answers when a wrapper is among them).
    ``failed(plugin, exc)``: the answer that stands for an implementation that raised ``exc``
    (the others are asked all the same); without it, the exception ends the hook's call."""

    def __init__(
        self,
        caller: HookCaller,
        *,
        without: object = None,
        pm: PluginManager | None = None,
        failed: Callable[[str, Exception], Any] | None = None,
    ):
        self._caller = caller
        self._without = without
        self._failed = failed
        self._through_pluggy = caller if pm is None else pm.subset_hook_caller(caller.name, [without])
        self._first = bool(caller.spec and caller.spec.opts.get("firstresult"))
        self._known: tuple[list[Any], list[tuple[Any, Any, str]] | None] = ([], None)
        """The implementations last seen, and how to call them (None: through pluggy); one
        value, so that a thread never pairs one list with another's plan."""

    def __call__(self, **kwargs: Any) -> Any:
        impls = self._caller.get_hookimpls()
        seen, plan = self._known
        if impls != seen:
            plain = not any(i.hookwrapper or i.wrapper for i in impls)
            plan = [(i.function, _arguments(i.argnames), i.plugin_name) for i in reversed(impls) if i.plugin is not self._without] if plain else None
            self._known = impls, plan
        if plan is None:
            try:
                return self._through_pluggy(**kwargs)
            except Exception as exc:
                if self._failed is None:
                    raise
                return [self._failed("a hook wrapper", exc)]
        answers = []
        for function, arguments, plugin in plan:
            try:
                answer = function(*arguments(kwargs))
            except Exception as exc:
                if self._failed is None:
                    raise
                answer = self._failed(plugin, exc)
            if answer is not None:
                if self._first:
                    return answer
                answers.append(answer)
        return None if self._first else answers


def _stops_the_call(plugin: str, exc: Exception) -> Around:
    """What stands for a plugin's ``fsmcp_around_call`` that raised when asked: a wrapper that
    answers INTERNAL_ERROR without running the call (the failed one may have been a policy the
    call must not go on without); the wrappers asked before it still see the call and its outcome."""
    log.error("plugin %s's fsmcp_around_call failed", plugin, exc_info=exc)

    async def around(run: Callable[[], Awaitable[Outcome]]) -> Outcome:
        return ToolError(
            ErrorCode.INTERNAL_ERROR,
            f"the call did not run: plugin {plugin} failed to wrap it ({type(exc).__name__}: {exc}); the server's log (stderr) has the details",
        )

    return around


def chosen(caller: HookCaller, **probe: Any) -> Callable[..., Any]:
    """``caller``, a ``firstresult`` hook whose contract settles at start which implementation
    answers (the result format: the formatter the ``format`` setting names answers, the others
    return None), as the implementation that answers ``probe`` first, called alone. Should it
    ever return None, the whole hook answers that call; so does every call when a wrapper is
    among the implementations, or none answers the probe."""
    impls = caller.get_hookimpls()
    if any(i.hookwrapper or i.wrapper for i in impls):
        return caller
    for impl in reversed(impls):
        function, arguments = impl.function, _arguments(impl.argnames)
        if function(*arguments(probe)) is not None:

            def answer(**kwargs: Any) -> Any:
                out = function(*arguments(kwargs))
                return out if out is not None else caller(**kwargs)

            return answer
    return caller


def _arguments(names: tuple[str, ...] | list[str]) -> Any:
    """What takes an implementation's positional arguments out of the call's keywords, as a tuple."""
    if len(names) == 1:
        name = names[0]
        return lambda kwargs: (kwargs[name],)
    return itemgetter(*names) if names else lambda kwargs: ()
