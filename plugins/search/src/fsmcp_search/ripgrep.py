"""ripgrep as a child process that cannot outlive the call: its own process group, killed on
the way out whether the search finished, had enough, failed or was cancelled by the client."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import metadata

import anyio
import anyio.abc

from fsmcp import ErrorCode, ToolContext, ToolError, start_program

PROGRESS_EVERY = 1.0
"""Seconds between progress notifications while ripgrep runs."""
_STDERR_LIMIT = 16_384


@functools.cache
def binary() -> str:
    """The ``rg`` of the ``ripgrep`` wheel this plugin depends on, else the one on PATH."""
    try:
        for file in metadata.distribution("ripgrep").files or []:
            # which() of a full path answers whether that file is an executable.
            if file.name in ("rg", "rg.exe") and (located := shutil.which(os.path.normpath(file.locate()))):
                return located
    except metadata.PackageNotFoundError:
        pass
    found = shutil.which("rg")
    if found is None:
        raise ToolError(ErrorCode.INTERNAL_ERROR, "ripgrep (rg) is not installed; reinstall fsmcp-search, which depends on the ripgrep wheel")
    return found


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP_")}
    env["RUST_BACKTRACE"] = "0"  # a crash report is one line, not a stack dump
    return env


class Ripgrep:
    """A running ripgrep: its output as records, then its exit status."""

    def __init__(self, process: anyio.abc.Process):
        self._process = process
        self._pending = b""

    async def records(self, separator: bytes) -> list[bytes] | None:
        """The next complete records of standard output; None at its end."""
        assert self._process.stdout is not None
        while True:
            try:
                chunk = await self._process.stdout.receive()
            except anyio.EndOfStream:
                rest, self._pending = self._pending, b""
                return [rest] if rest else None
            *done, self._pending = (self._pending + chunk).split(separator)
            if done:
                return done

    async def finish(self) -> tuple[int, str]:
        """Exit status and (the start of) what ripgrep wrote to standard error."""
        assert self._process.stderr is not None
        err = bytearray()
        async for chunk in self._process.stderr:
            if len(err) < _STDERR_LIMIT:
                err += chunk
        return await self._process.wait(), err.decode("utf-8", "replace")


@asynccontextmanager
async def run(ctx: ToolContext, args: list[str], *, cwd: str, stdin: str = "") -> AsyncIterator[Ripgrep]:
    """ripgrep started through the host, so that it reads beneath the roots and nowhere else."""
    process = await start_program(
        ctx, ["rg", *args], executable=binary(), cwd=cwd, env=_environment(), stdin=subprocess.PIPE if stdin else subprocess.DEVNULL
    )
    try:
        if stdin:
            assert process.stdin is not None
            try:
                await process.stdin.send(stdin.encode())
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # ripgrep stopped before reading it; its exit status says why
            await process.stdin.aclose()
        yield Ripgrep(process)
    finally:
        with anyio.CancelScope(shield=True):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # already gone and reaped
            await process.aclose()


@asynccontextmanager
async def progress(ctx: ToolContext, describe: Callable[[], str]) -> AsyncIterator[None]:
    """Progress notifications while the body runs: a first one, one a second, a last one.

    The progress value counts notifications, so it always increases; ``describe`` says how far
    the search has got. A client that did not ask for progress gets nothing.
    """
    count = 0

    async def send(total: float | None = None) -> None:
        nonlocal count
        count += 1
        try:
            await ctx.aprogress(count, total, describe())
        except Exception:  # a progress note that cannot be sent must not fail the search
            pass

    async def tick() -> None:
        while True:
            await anyio.sleep(PROGRESS_EVERY)
            await send()

    await send()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The ticker never fails, so the one exception is the search's own (ToolError, cancel).
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    await send(count + 1)


async def drain(rg: Ripgrep, separator: bytes, feed: Callable[[list[bytes]], bool]) -> bool:
    """Hand ripgrep's records to ``feed`` until it returns False (had enough) or output ends.

    Returns whether ripgrep ran to the end.
    """
    while (batch := await rg.records(separator)) is not None:
        if not feed(batch):
            return False
    return True


def failure(code: int, stderr: str, what: str) -> ToolError | None:
    """The error for a ripgrep exit status, or None when the search completed."""
    if code in (0, 1) or (code == 2 and not stderr.strip()):
        return None  # 2 without a message: some file could not be read (--no-messages)
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if any("regex" in line or "glob" in line for line in lines):
        reason = next((line.removeprefix("error: ") for line in reversed(lines) if line.startswith("error:")), lines[-1].removeprefix("rg: "))
        return ToolError(ErrorCode.INVALID_PARAMS, f"{what} is not valid: {reason}; fix it (escape metacharacters for literal text)")
    if any("impossible to match" in line for line in lines):
        # ripgrep refuses a pattern that can only match a NUL byte: only binary files hold one,
        # and those are skipped.
        return ToolError(ErrorCode.INVALID_PARAMS, f"{what} matches a NUL byte, which only binary files hold, and those are not searched; drop the NUL from the pattern")
    detail = lines[0].removeprefix("rg: ") if lines else "no message"
    return ToolError(ErrorCode.INTERNAL_ERROR, f"ripgrep failed (exit status {code}: {detail}); try a simpler pattern or a narrower directory")
