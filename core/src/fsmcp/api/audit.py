"""The audit log: one JSON line per tool call a client made (``--audit-log FILE``).

A line holds ``time``, ``session``, ``tool``, ``paths`` (every path the arguments name, each
once; for a call whose arguments name none, such as an undo, the paths it changed), ``outcome``
(``ok`` or the error code), ``durationMs`` and ``args``: numbers and booleans as given, short
strings that carry no content as given, a list of objects under a path key (``write_files``'
``files``) as each object described so, anything else (file content, edits, a patch, a command
line, lists and objects) as its size and a SHA-256 prefix, never its value. Code running for a
call adds fields of its own with :func:`note` (``run_command`` adds ``program``, the file it ran).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import Any

PATH_KEYS = frozenset({"path", "paths", "source", "destination", "directory", "archive", "output", "files", "workingDirectory"})
"""Argument names that hold paths, at any depth (a batch's steps, ``write_files``' items)."""
CONTENT_KEYS = frozenset({"content", "newText", "oldText", "patch", "command", "args", "regex", "nameContains"})
"""Argument names whose value is never written, however short."""
SHORT = 40
MAX_PATHS = 100

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


def summary(value: Any) -> dict[str, Any]:
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str).encode()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}


def named_paths(arguments: Any, key: str | None = None, found: dict[str, None] | None = None) -> list[str]:
    """Each path the arguments name, once, in order (a batch that reads a file and then edits it names it twice)."""
    found = {} if found is None else found
    if isinstance(arguments, dict):
        for k, v in arguments.items():
            named_paths(v, k, found)
    elif isinstance(arguments, list):
        for v in arguments:
            named_paths(v, key, found)
    elif isinstance(arguments, str) and key in PATH_KEYS and len(found) < MAX_PATHS:
        found[arguments] = None
    return list(found)


def described(arguments: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in PATH_KEYS:
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                out[key] = [described(v) for v in value]  # write_files' items: their paths are in ``paths``
            continue  # in ``paths``
        if value is None or isinstance(value, (bool, int, float)):
            out[key] = value
        elif isinstance(value, str) and len(value) <= SHORT and key not in CONTENT_KEYS:
            out[key] = value
        else:
            out[key] = summary(value)
    return out


class AuditLog:
    """Appends lines to ``path``, rotating it to ``path.1`` … ``path.<keep>`` past ``max_bytes``."""

    def __init__(self, path: str, max_bytes: int, keep: int):
        self.path = os.path.abspath(os.path.expanduser(path))
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()
        self._fd = self._open()

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextmanager
    def recording(
        self, session: str, tool: str | None, arguments: dict[str, Any] | None, notes: dict[str, Any], changes: list[str],
    ) -> Iterator[dict[str, Any]]:
        """Around one call: set ``outcome`` in the yielded dict; the line is written at the end.

        ``notes`` and ``changes`` are the call's own (:class:`fsmcp.ToolCall`): they travel with
        the call wherever its wrappers run it, and the call's code reaches them through :func:`noting`."""
        started = datetime.now(timezone.utc)
        clock = time.perf_counter()
        line: dict[str, Any] = {"time": started.isoformat(timespec="milliseconds").replace("+00:00", "Z"), "session": session, "tool": tool}
        args = arguments if isinstance(arguments, dict) else {}
        line["paths"] = named_paths(args)
        line["outcome"] = "ok"
        try:
            yield line
        finally:
            if not line["paths"]:
                # Only then: a changed path is a real path, and the arguments may name it relative.
                line["paths"] = list(dict.fromkeys(changes))[:MAX_PATHS]
            line["durationMs"] = round((time.perf_counter() - clock) * 1000, 3)
            line["args"] = described(args)
            self.write({**notes, **line})

    def write(self, line: dict[str, Any]) -> None:
        data = (json.dumps(line, ensure_ascii=True, default=str) + "\n").encode()
        with self._lock:
            if os.fstat(self._fd).st_size + len(data) > self.max_bytes:
                self._rotate()
            os.write(self._fd, data)

    def _rotate(self) -> None:
        os.close(self._fd)
        if self.keep == 0:
            os.unlink(self.path)
        else:
            for n in range(self.keep - 1, 0, -1):
                if os.path.exists(f"{self.path}.{n}"):
                    os.replace(f"{self.path}.{n}", f"{self.path}.{n + 1}")
            os.replace(self.path, f"{self.path}.1")
        self._fd = self._open()

    def close(self) -> None:
        os.close(self._fd)

