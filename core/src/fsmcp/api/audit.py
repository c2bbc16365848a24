"""What a call adds to its audit line: fields (:func:`note`, ``run_command`` adds ``program``, the
file it ran) and the paths its change changed (:data:`CHANGED`). The log itself, its lines and
files, is the built-in plugin's (:mod:`fsmcp.builtin.audit`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_notes: ContextVar[dict[str, Any] | None] = ContextVar("fsmcp_audit_notes", default=None)
CHANGED: ContextVar[list[str] | None] = ContextVar("fsmcp_audit_changed", default=None)
"""The paths the call in progress changes, for its line's ``paths``; None without an audit log
(a change adds its paths to the list it finds here)."""


def note(**fields: Any) -> None:
    """Add fields to the audit line of the call in progress (a no-op without an audit log).

    For example ``note(allowedOnce=["/srv/app/.env"])``. Values must be JSON-serialisable and
    small; the standard fields cannot be replaced.
    """
    notes = _notes.get()
    if notes is not None:
        notes.update(fields)


@contextmanager
def noting(notes: dict[str, Any], changes: list[str]) -> Iterator[None]:
    """Where :func:`note` and a change (:data:`CHANGED`) add to, for the code of one call (the call runner
    enters it around a wrapped call, and again in the task that runs the call itself)."""
    token, changes_token = _notes.set(notes), CHANGED.set(changes)
    try:
        yield
    finally:
        _notes.reset(token)
        CHANGED.reset(changes_token)
