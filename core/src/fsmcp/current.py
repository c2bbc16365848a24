"""The tool call the running code serves: whether it was cancelled, and the change it makes.

The host's primitives (:mod:`fsmcp.dirfd`, :mod:`fsmcp.fs`) ask here about the call they work
for without being handed its context; this module imports nothing of the host, so that they
need not import the context either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .change import Change

_current: ContextVar[Any] = ContextVar("fsmcp_current_call", default=None)


def call() -> Any:
    """The running call's :class:`~fsmcp.context.ToolContext`, or None outside a call."""
    return _current.get()


def enter(ctx: Any) -> Token:
    return _current.set(ctx)


def leave(token: Token) -> None:
    _current.reset(token)


QUICK_BYTES = 256 * 1024
"""File bytes a quick tool's call may open on the event loop before it moves to a worker thread."""


class OffLoop(Exception):
    """A quick tool's call on the event loop met more work than a moment's: the host runs it again in a worker thread."""


def weigh(nbytes: int) -> None:
    """Count a file of ``nbytes`` opened for the running call; on the event loop, past
    :data:`QUICK_BYTES` in all, raise :class:`OffLoop`."""
    ctx = _current.get()
    if ctx is not None and getattr(ctx, "on_loop", False):
        ctx.loop_bytes += nbytes
        if ctx.loop_bytes > QUICK_BYTES:
            raise OffLoop


def off_loop() -> None:
    """Before work of unknown size (a listing, a walk): on the event loop, raise :class:`OffLoop`."""
    ctx = _current.get()
    if ctx is not None and getattr(ctx, "on_loop", False):
        raise OffLoop


def check_cancelled() -> None:
    """Raise if the tool call this code runs for was cancelled.

    For the host's own long primitives (copying a tree), which serve a call without being
    handed its context; a no-op outside a call.
    """
    ctx = _current.get()
    if ctx is not None:
        ctx.check_cancelled()


def change() -> Change | None:
    """The change the running call makes (every primitive announces its paths to it)."""
    ctx = _current.get()
    return None if ctx is None else ctx.change


@contextmanager
def uncancellable() -> Iterator[None]:
    """Inside this block :func:`check_cancelled` never raises (for work that must finish).

    The call's change stays current: what a rollback or restore changes is still announced.
    """
    ctx = _current.get()
    token = _current.set(None if ctx is None else _Uncancellable(ctx.change))
    try:
        yield
    finally:
        _current.reset(token)


class _Uncancellable:
    def __init__(self, change: Change | None):
        self.change = change

    def check_cancelled(self) -> None:
        pass
