"""What a tool receives besides its arguments: the host's file system, budget and progress."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..api.errors import ErrorCode, ToolError
from ..paths.change import read_only_refusal
from ..paths.guard import current_session
from ..paths.protected import ProtectedNames
from ..paths.roots import RootsView, echoed

if TYPE_CHECKING:
    from pathlib import Path

    from ..paths.change import Change
    from ..api.config import Settings
    from ..paths.fs import FileSystem
    from ..api.journal import JournalView
    from ..builtin.journal import Journal
    from ..paths.roots import ResolvedPath
    from ..api.tools import Tool, ToolResult

ProgressSender = Callable[[float, float | None, str | None], Awaitable[None]]
ToolRunner = Callable[..., Awaitable["ToolResult | ToolError"]]


class ToolContext:
    """One call's context: everything of the host a tool may use (docs/writing-plugins.md, section 5).

    ``fs`` is the only way a tool touches files: the host's file system bound to this call
    (:meth:`fsmcp.paths.fs.FileSystem.for_call`), so that its primitives announce what they change to
    ``change``, stop when the call is cancelled and count what a quick call opens. ``budget`` is the
    number of text characters the result may carry; ``tools`` are the tools the server offers.
    ``change`` is what this call changes (shared with the call that runs this one, if any), for
    the host; a tool speaks of it through ``hold``, ``declare_transactional`` and ``settle``.
    """

    def __init__(
        self,
        *,
        fs: FileSystem,
        settings: Settings,
        tool: Tool,
        tools: dict[str, Tool] | None = None,
        send_progress: ProgressSender | None = None,
        run_tool: ToolRunner | None = None,
        budget: int | None = None,
        change: Change | None = None,
        journal: Journal | None = None,
        protected: Callable[[Any], ProtectedNames] | None = None,
        is_protected: Callable[[Any], bool] | None = None,
        unknown_tool: Callable[[str], str] | None = None,
    ):
        self.change = change
        self._journal = journal
        self._protected = protected
        self._is_protected = is_protected
        self._unknown_tool = unknown_tool
        self.settings = settings
        self.tool = tool
        self.tools = tools or {}
        self.budget = budget or settings.budget
        self._send_progress = send_progress
        self._run_tool = run_tool
        self._cancelled = False
        self.on_loop = False
        """Running on the event loop as a quick tool (:attr:`fsmcp.Tool.quick`)."""
        self.loop_bytes = 0
        """File bytes the call opened on the event loop so far (:meth:`fsmcp.paths.fs.FileSystem.open_read` counts them)."""
        self.ordered = False
        """The call took a place in the server's order of changes and programs
        (:class:`fsmcp.paths.change.Order`), which it holds until it ends."""
        self.fs = fs.for_call(self)
        self._loop: asyncio.AbstractEventLoop | None = None
        if send_progress is not None:  # asked only then: on Python 3.11 each asking is a system call
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:  # made outside the server (a direct call in a test): no client to tell
                pass

    @cached_property
    def options(self) -> dict[str, Any]:
        """The tool's plugin section of the configuration (read at first use: most calls never do)."""
        return self.settings.options(self.tool.plugin)

    @cached_property
    def roots(self) -> RootsView:
        """The roots as this call's client sees them, read-only."""
        return RootsView(self.fs.roots)

    def set_workspace(self, raw: str) -> Path:
        """Make ``raw``, a directory inside the usable roots, where this client's relative paths resolve.

        Returns its real path. ``ACCESS_DENIED`` outside the roots, ``NOT_FOUND`` or
        ``NOT_DIRECTORY`` when it is no directory. ``INTERNAL_ERROR`` for a tool declared
        read-only, unless the server runs read-only (``--read-only``).
        """
        tool = self.tool
        if tool.annotations.read_only and not self.settings.read_only:
            # The workspace is the session's state, which a read-only tool leaves as it found it.
            # Under --read-only, where every tool offered is read-only, moving it is a read
            # (the workspace plugin's set_workspace is offered then, listed READ_ONLY).
            raise read_only_refusal(tool, f"move the workspace to {echoed(raw)}")
        return self.fs.roots.set_workspace(raw)

    def hold(self, path: ResolvedPath) -> None:
        """Hold ``path``'s lock from now until the call ends (in a tool that may change files).

        For a tool that looks at a file before it changes it another way than by reading it
        through ``fs`` (its size, its times): what it saw is what it changes, since another
        change to the file waits for this call. ``fs`` holds what it reads and changes itself.
        """
        self.fs.guard.hold(path.path)

    @property
    def journal(self) -> JournalView | None:
        """The host's change journal as this call sees it, None when the journal is off."""
        if self._journal is None:
            return None
        from ..api.journal import JournalView

        return JournalView(self._journal, self.fs, self.fs.roots, self.change.session if self.change is not None else current_session().id)

    def declare_transactional(self) -> None:
        """Say this call's change is all or nothing: cut short by a crash, the next start rolls it
        back from the journal instead of keeping what reached the disk (a transactional batch)."""
        if self.change is not None:
            self.change.transactional = True

    def settle(self) -> None:
        """Wait until no tool this call started through ``run_tool`` still runs.

        A cancelled call's tool stops at its next check for cancellation; what it changed until
        then belongs to this call, so a rollback waits for it (from a worker thread, never the loop).
        """
        if self.change is not None:
            self.change.settle()

    def protected(self, root: Any) -> ProtectedNames:
        """The protected names under ``root`` (a :class:`fsmcp.Root`, or a root's real path)."""
        return self._protected(root) if self._protected is not None else ProtectedNames(())

    def is_protected(self, path: Any) -> bool:
        """Whether ``path`` (a :class:`fsmcp.ResolvedPath`, or an absolute real path inside the roots) is protected."""
        return self._is_protected(path) if self._is_protected is not None else False

    def unknown_tool(self, name: str) -> str:
        """What a call of ``name``, a tool the server does not offer, is told."""
        return self._unknown_tool(name) if self._unknown_tool is not None else f"unknown tool {name!r}"

    async def run_tool(self, name: str, arguments: dict[str, Any] | None, *, budget: int | None = None) -> ToolResult | ToolError:
        """Run another offered tool; returns its result or the ToolError it met (never raises it).

        ``budget`` gives the inner tool a smaller output budget (its share of this one's), so it
        cuts its own output where it makes sense and says how to get the rest.
        """
        if self._run_tool is None:
            return ToolError(ErrorCode.INTERNAL_ERROR, "this context cannot run other tools")
        return await self._run_tool(name, arguments, budget=budget, caller=self)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True  # read by the call's thread at its next check

    def check_cancelled(self) -> None:
        """Raise if the client cancelled this call; a tool calls it between units of work."""
        if self._cancelled:
            raise ToolError(ErrorCode.INTERNAL_ERROR, f"{self.tool.name} was cancelled by the client")

    async def aprogress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress from an ``async`` tool; a no-op when the client did not ask for it."""
        if self._send_progress is not None:
            await self._send_progress(done, total, message)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress from a plain (worker-thread) tool; returns once the report is sent."""
        if self._send_progress is None or self._loop is None:
            return
        report = self._send_progress(done, total, message)
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:  # a plain helper of an async tool: the loop cannot wait for itself
            self._loop.create_task(report)
            return
        try:
            asyncio.run_coroutine_threadsafe(report, self._loop).result()
        except RuntimeError:  # the loop has closed: the client is gone
            report.close()
