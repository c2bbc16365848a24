"""watch_file: what changed under a path since the last look, or a wait for the next change."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from fsmcp import Access, ErrorCode, ToolContext, ToolError, ToolResult, shown_name

from .baselines import baselines_for
from .changes import Entries, Event, by_time, carry, compare, modified_since, ordered
from .engines import EngineUnavailable, Waiter, open_waiter
from .models import WatchFileInput
from .options import Options
from .scan import Scanner, State

log = logging.getLogger("fsmcp.watch")

T = TypeVar("T")
NOTICE_ROOM = 300
PROGRESS_SECONDS = 2.0


async def watch_file(args: WatchFileInput, ctx: ToolContext) -> ToolResult:
    call = _Call(args, ctx)
    try:
        await call.run()
    finally:
        call.stop.set()  # ends a scan or a wait still running in an abandoned worker thread
    return call.report()


class _Call:
    """One watch_file call: the baseline it starts from, its looks, and the baseline it leaves."""

    def __init__(self, args: WatchFileInput, ctx: ToolContext):
        self.args, self.ctx = args, ctx
        self.opts = Options.of(ctx.options)
        self.top = str(ctx.fs.resolve(args.path, Access.READ).path)
        self.key = (self.top, args.recursive)
        self.store = baselines_for(ctx.fs)
        self.wanted = set(args.events)
        self.stop = threading.Event()
        self.scanner = Scanner(ctx.fs, self.top, args.recursive, self.opts.max_entries, self.stop)
        self.engine: str | None = None
        self.before: Entries = {}
        self.state: State | None = None
        self.events: list[Event] = []

    async def run(self) -> None:
        baseline = self.store.get(self.key)
        since_ns = _since_ns(self.args.since, baseline)
        self.state = await self._in_thread(self.scanner.scan)
        if baseline is not None:
            self.before = baseline
        elif self.state is not None:
            self.before = self.state.entries
        else:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f'{shown_name(self.top)} does not exist; to wait for it to appear, watch its directory with events ["create"] and waitSeconds',
            )
        await self._judge(since_ns)
        started = last_progress = time.monotonic()
        deadline = started + self.args.wait_seconds
        waiter: Waiter | None = None
        try:
            while not self._done() and (left := deadline - time.monotonic()) > 0:
                if waiter is None:
                    waiter = await self._open()
                    # Looked at after the watcher is up: nothing that happens after this is missed.
                    self.state = await self._in_thread(self.scanner.scan)
                else:
                    try:
                        changed = await waiter.wait(left, self.stop)
                    except EngineUnavailable as exc:
                        waiter.close()
                        waiter = None
                        self._fall_back(exc)
                        continue
                    waiter = await self._look_again(waiter, changed)
                await self._judge(since_ns)
                if time.monotonic() - last_progress >= PROGRESS_SECONDS:
                    last_progress = time.monotonic()
                    await self.ctx.aprogress(round(last_progress - started, 1), self.args.wait_seconds, "waiting for changes")
        finally:
            if waiter is not None:
                waiter.close()

    async def _open(self) -> Waiter:
        assert self.state is not None
        engine = self.engine or ("notify" if self.opts.engine == "auto" else self.opts.engine)
        try:
            waiter = await open_waiter(engine, self.state.dirs, self.state.seconds)
        except EngineUnavailable as exc:
            self._fall_back(exc)
            waiter = await open_waiter("poll", self.state.dirs, self.state.seconds)
        self.engine = waiter.name
        return waiter

    def _fall_back(self, exc: EngineUnavailable) -> None:
        if self.opts.engine == "notify":
            raise ToolError(
                ErrorCode.INTERNAL_ERROR,
                f'watch_file cannot wait with the notify engine here ({exc}); the operator can set engine = "auto" or "poll" under [plugins.watch]',
            )
        log.warning("watch_file: notify is unavailable (%s); polling for the rest of this call", exc)
        self.engine = "poll"

    async def _look_again(self, waiter: Waiter, changed: set[str] | None) -> Waiter:
        """The state after a wake-up: a whole scan, or the named paths again; the waiter to go on with."""
        assert self.state is not None
        if changed is None:
            self.state = await self._in_thread(self.scanner.scan)
            return waiter
        self.state = await self._in_thread(self.scanner.refresh, self.state, self._watched(changed))
        while self.state is not None and not waiter.covers(self.state.dirs):
            # New directories: a watcher over them is up before the old one's last changes are
            # taken and before the new ones are looked into again, so nothing falls in between.
            new_dirs = {d for d in self.state.dirs if not waiter.covers([d])}
            fresh = await self._open()
            try:
                leftover = await waiter.drain()
            except EngineUnavailable:
                leftover = None
            waiter.close()
            waiter = fresh
            if leftover is None:  # the old watcher broke: nothing it gathered can be trusted
                self.state = await self._in_thread(self.scanner.scan)
            else:
                self.state = await self._in_thread(self.scanner.refresh, self.state, self._watched(leftover) | new_dirs)
        return waiter

    def _watched(self, changed: set[str]) -> set[str]:
        """The notified paths this call watches: the path itself, or entries of its watched directories."""
        assert self.state is not None
        if self.state.entries[""].kind != "directory":
            return {p for p in changed if p == self.top}
        dirs = set(self.state.dirs)
        return {p for p in changed if p == self.top or os.path.dirname(p) in dirs}

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        # Abandoned on cancel: the call ends at once, and `stop` ends the thread soon after.
        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)

    async def _judge(self, since_ns: int | None) -> None:
        if self.state is None:
            new = await self._in_thread(self.scanner.moved_to, self.before[""])
            # A new path outside the watched one is absolute; _full() keeps it as it is.
            self.events = [Event("rename", new, "")] if new is not None else [Event("delete", "")]
            return
        events = compare(self.before, self.state.entries)
        if self.args.since is not None and since_ns is not None:
            # An explicit since is judged by the files' times: a file last modified before it is
            # not reported, whatever a baseline from an earlier call remembers.
            events = by_time(events, self.state.entries, since_ns)
        if since_ns is not None:
            reported = {e.path for e in events if e.kind != "delete"}
            born = self.scanner.born if "create" in self.wanted else None
            events += await self._in_thread(modified_since, self.state.entries, since_ns, reported, born)
        self.events = events

    def _done(self) -> bool:
        return self.state is None or any(e.kind in self.wanted for e in self.events)

    def report(self) -> ToolResult:
        matching = ordered([e for e in self.events if e.kind in self.wanted])
        lines = [_line(self.top, e) for e in matching]
        room, fit = self.ctx.budget - NOTICE_ROOM, 0
        for line in lines:
            room -= len(line) + 1
            if room < 0:
                break
            fit += 1
        shown, withheld = matching[:fit], matching[fit:]
        if self.state is None:
            # Reported, the path is forgotten; not reported, the next call reports it again.
            if shown:
                self.store.drop(self.key)
            else:
                self.store.put(self.key, self.before, self.opts.baseline_entries)
        else:
            # The baseline moves on by exactly what the caller was shown.
            unseen = withheld + [e for e in self.events if e.kind not in self.wanted]
            self.store.put(self.key, carry(self.before, self.state.entries, unseen), self.opts.baseline_entries)
        text = "\n".join(lines[:fit]) or "(no changes)"
        if withheld:
            text += (
                f"\n[{len(withheld):,} more events not shown (output budget {self.ctx.budget:,} characters); "
                "call watch_file again on this path, without since, for the rest]"
            )
        if self.state is None and not shown:
            text += f'\n[{shown_name(self.top)} no longer exists; pass events ["delete", "rename"] to have that reported]'
        data = {"path": shown_name(self.top), "events": [_datum(self.top, e) for e in shown], "more": len(withheld), "engine": self.engine}
        return ToolResult.text(text, data)


def _since_ns(since_ms: float | None, baseline: Entries | None) -> int | None:
    if since_ms is not None:
        return int(since_ms * 1_000_000)
    # After the first call the baseline says what changed; a default `since` would repeat it.
    return None if baseline is not None else time.time_ns() - 1_000_000_000


def _full(top: str, rel: str) -> str:
    """The path as written in the report (the host's rule for names)."""
    return shown_name(top if rel == "" else os.path.join(top, rel))


def _line(top: str, e: Event) -> str:
    if e.kind == "rename":
        return f"rename {_full(top, e.old or '')} -> {_full(top, e.path)}"
    return f"{e.kind} {_full(top, e.path)}"


def _datum(top: str, e: Event) -> dict[str, str]:
    datum = {"event": e.kind, "path": _full(top, e.path)}
    if e.kind == "rename":
        datum["from"] = _full(top, e.old or "")
    return datum
