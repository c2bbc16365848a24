"""The audit log as a plugin: one JSON line per tool call a client made (``--audit-log FILE``).

It wraps each call (``fsmcp_around_call``) in a line of its own, outermost, so that a
call consent runs again is still one line. Registered only when the operator names a log;
``disable = ["fsmcp.audit"]`` keeps none even then, and a plugin of that name replaces it.

A line holds ``time``, ``session``, ``tool``, ``paths`` (every path the arguments name, each
once; for a call whose arguments name none, such as an undo, the paths it changed), ``outcome``
(``ok`` or the error code), ``durationMs`` and ``args``: numbers and booleans as given, short
strings that carry no content as given, a list of objects under a path key (``write_files``'
``files``) as each object described so, anything else (file content, edits, a patch, a command
line, lists and objects) as its size and a SHA-256 prefix, never its value. Code running for a
call adds fields of its own with :func:`fsmcp.api.audit.note`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import anyio

from ..api.errors import ErrorCode, ToolError
from ..api.hooks import hookimpl

if TYPE_CHECKING:
    from ..api.config import Settings
    from ..run.runner import Around, Outcome, ToolCall

NAME = "fsmcp.audit"
PATH_KEYS = frozenset({"path", "paths", "source", "destination", "directory", "archive", "output", "files", "workingDirectory"})
"""Argument names that hold paths, at any depth (a batch's steps, ``write_files``' items)."""
CONTENT_KEYS = frozenset({"content", "newText", "oldText", "patch", "command", "args", "regex", "nameContains"})
"""Argument names whose value is never written, however short."""
SHORT = 40
MAX_PATHS = 100


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


class Audit:
    """Appends a line per call to ``path``, rotating it to ``path.1`` … ``path.<keep>`` past ``max_bytes``."""

    def __init__(self, path: str, max_bytes: int, keep: int):
        self.path = os.path.abspath(os.path.expanduser(path))
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()
        self._fd = self._open()

    @classmethod
    def for_settings(cls, settings: Settings) -> Audit | None:
        if not settings.audit_log:
            return None
        return cls(settings.audit_log, settings.audit_log_max_bytes, settings.audit_log_keep)

    @hookimpl(tryfirst=True)
    def fsmcp_around_call(self, call: ToolCall) -> Around:
        async def around(run: Callable[[], Awaitable[Outcome]]) -> Outcome:
            with self._recording(call) as line:
                try:
                    outcome = await run()
                except anyio.get_cancelled_exc_class():
                    line["outcome"] = "cancelled"
                    raise
                except BaseException:  # a wrapper's bug: the client gets the transport's internal error
                    line["outcome"] = ErrorCode.INTERNAL_ERROR.value
                    raise
                if isinstance(outcome, ToolError):
                    line["outcome"] = outcome.code.value
                if call.asking is not None and call.asking.waiting:  # the client gets the questions, not this outcome
                    line["outcome"] = "input_required"
            return outcome

        async def refused(run: Callable[[], Awaitable[Outcome]]) -> Outcome:
            # The client gets the transport's error, whatever the wrappers inside do.
            with self._recording(call) as line:
                line["outcome"], line["jsonrpcError"] = ErrorCode.INVALID_PARAMS.value, call.refused
                return await run()

        return around if call.refused is None else refused

    @contextmanager
    def _recording(self, call: ToolCall) -> Iterator[dict[str, Any]]:
        """Around one call: set ``outcome`` in the yielded dict; the line is written at the end.

        ``call.notes`` and ``call.changed`` are the call's own: they travel with the call wherever
        its wrappers run it, and the call's code reaches them through :func:`fsmcp.api.audit.noting`."""
        started = datetime.now(timezone.utc)
        clock = time.perf_counter()
        # A call the transport refused may name no tool (its params had no string name).
        line: dict[str, Any] = {"time": started.isoformat(timespec="milliseconds").replace("+00:00", "Z"), "session": call.session, "tool": call.name or None}
        args = call.arguments if isinstance(call.arguments, dict) else {}
        line["paths"] = named_paths(args)
        line["outcome"] = "ok"
        try:
            yield line
        finally:
            if not line["paths"]:
                # Only then: a changed path is a real path, and the arguments may name it relative.
                line["paths"] = list(dict.fromkeys(call.changed))[:MAX_PATHS]
            line["durationMs"] = round((time.perf_counter() - clock) * 1000, 3)
            line["args"] = described(args)
            self._write({**call.notes, **line})

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def _write(self, line: dict[str, Any]) -> None:
        data = (json.dumps(line, ensure_ascii=True, default=str) + "\n").encode()
        with self._lock:
            # Several processes append to one log (HTTP workers, servers sharing it): each line is
            # one O_APPEND write, and the log is rotated under an flock of the file being rotated,
            # after checking it is still the log (another process may have rotated it already:
            # its lines then go to the new log, not on into the rotated one).
            while True:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
                try:
                    if not self._current():
                        os.close(self._fd)
                        self._fd = self._open()
                        continue
                    if os.fstat(self._fd).st_size + len(data) > self.max_bytes:
                        self._rotate()  # the old file's lock goes with its descriptor
                    os.write(self._fd, data)
                    return
                finally:
                    with contextlib.suppress(OSError):
                        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _current(self) -> bool:
        """Whether this process's descriptor is still the log's path (not rotated away by another)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(self._fd)
        return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)

    def _rotate(self) -> None:
        # Renamed while this descriptor still holds the lock: a process waiting for it then finds
        # the log rotated, and does not rotate it again.
        if self.keep == 0:
            os.unlink(self.path)
        else:
            for n in range(self.keep - 1, 0, -1):
                if os.path.exists(f"{self.path}.{n}"):
                    os.replace(f"{self.path}.{n}", f"{self.path}.{n + 1}")
            os.replace(self.path, f"{self.path}.1")
        os.close(self._fd)
        self._fd = self._open()
