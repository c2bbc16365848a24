"""A command as a child process that cannot outlive its call.

It runs in a session (and process group) of its own, with standard input from /dev/null and
both outputs piped (over stdio the server's own standard input and output are the protocol).
When it ends, times out, or the client cancels, the whole group is killed and reaped, so a
background child (``sleep 100 &``) goes with it.
"""

from __future__ import annotations

import codecs
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
import anyio.abc

from fsmcp import ProgramView, ToolContext, audit_note, start_program

DRAIN_AFTER_EXIT = 1.0
"""Seconds to collect output still in the pipes once the group is gone."""
PROGRESS_EVERY = 1.0


@dataclass
class Captured:
    """One output stream: the first ``cap`` bytes, and how many there were in all."""

    cap: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0
    done: anyio.Event = field(default_factory=anyio.Event)

    async def collect(self, stream: anyio.abc.ByteReceiveStream) -> None:
        try:
            async for chunk in stream:
                self.total += len(chunk)
                room = self.cap - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self.done.set()

    @property
    def truncated(self) -> bool:
        return self.total > len(self.kept)

    def text(self) -> str:
        # A character cut in half by the cap is left out rather than shown as U+FFFD.
        return codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self.kept), final=not self.truncated)


@dataclass
class Finished:
    returncode: int
    timed_out: bool
    stdout: Captured
    stderr: Captured

    @property
    def exit_code(self) -> int | None:
        return self.returncode if self.returncode >= 0 else None

    @property
    def signal(self) -> str | None:
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


async def execute(
    ctx: ToolContext,
    argv: list[str],
    *,
    program: str,
    writes: bool,
    network: bool,
    cwd: str,
    env: dict[str, str],
    timeout: float,
    grace: float,
    cap: int,
    tick: Callable[[float], Awaitable[None]] | None = None,
    view: ProgramView | None = None,
) -> Finished:
    """Run ``argv`` to its end or to ``timeout`` seconds (then SIGTERM, ``grace``, SIGKILL).

    It starts through the host, confined: ``writes`` beneath the read-write roots or not at all,
    TCP only with ``network``, and it may run the programs on its PATH; over ``view``, when given.
    """
    runs = [d for d in env.get("PATH", "").split(os.pathsep) if d]
    # Which program ran is the operator's to know; its arguments may carry content, and stay hashed.
    audit_note(program=program)
    process = await start_program(ctx, argv, executable=program, cwd=cwd, env=env, writes=writes, network=network, runs=runs, view=view)
    assert process.stdout is not None and process.stderr is not None
    out, err = Captured(cap), Captured(cap)
    timed_out = False
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(out.collect, process.stdout)
            tg.start_soon(err.collect, process.stderr)
            if tick is not None:
                tg.start_soon(_ticking, tick)
            with anyio.move_on_after(timeout):
                await process.wait()
            if process.returncode is None:
                timed_out = True
                _signal_group(process, signal.SIGTERM)
                with anyio.move_on_after(grace):
                    await process.wait()
            # Whatever is left of the group (children that ignored SIGTERM, or were put in the
            # background) must not outlive the call.
            _signal_group(process, signal.SIGKILL)
            await process.wait()
            with anyio.move_on_after(DRAIN_AFTER_EXIT):
                await out.done.wait()
                await err.done.wait()
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            _signal_group(process, signal.SIGKILL)
            await process.aclose()
    assert process.returncode is not None
    return Finished(process.returncode, timed_out, out, err)


def _signal_group(process: anyio.abc.Process, sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already


async def _ticking(tick: Callable[[float], Awaitable[None]]) -> None:
    elapsed = 0.0
    while True:
        await anyio.sleep(PROGRESS_EVERY)
        elapsed += PROGRESS_EVERY
        try:
            await tick(elapsed)
        except Exception:  # a progress note that cannot be sent must not stop the command
            pass


def progress_ticks(ctx: ToolContext, what: str, timeout: float) -> Callable[[float], Awaitable[None]]:
    async def tick(elapsed: float) -> None:
        await ctx.aprogress(elapsed, timeout, f"{what} has run for {elapsed:g} s")

    return tick
