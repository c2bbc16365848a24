"""The tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28): where a task's state is kept.

A long tool's call (:attr:`fsmcp.api.tools.Tool.long`) from a client that declares the extension
returns a task at once; the call runs on, and its status and final result are written here, one
file a task, so that a ``tasks/get`` served by another process of the same user (a worker, a
replica on a shared file system) reads what the process running it wrote. The directory is the
server's state (``$XDG_STATE_HOME/fsmcp/tasks``): 0700, this user's alone, never inside a root,
bounded (a task's TTL, a cap on the files and on each file's size), and every file read back is
checked as untrusted input (its name, its owner, its size, its fields).

A task ID is 128 random bits: it is the only handle to a task (the extension has no
``tasks/list``), so nobody who was not given it can poll or cancel the task.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import stat as stat_mod
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..paths.state import apart, private_dir, state_home

log = logging.getLogger("fsmcp")

EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier, in the client's per-request capabilities and the server's."""
MISSING_CAPABILITY = -32021
"""The error for a ``tasks/*`` request from a client that does not declare the extension."""
TTL_MS = 3_600_000
"""A task is kept an hour from its creation (``ttlMs``)."""
KEPT_AFTER_END_MS = 600_000
"""A task that ends late in its hour keeps its result ten minutes more: its ``ttlMs`` grows."""
POLL_INTERVAL_MS = 1000
"""The polling interval the server suggests (``pollIntervalMs``)."""
MAX_TASKS = 256
"""Task files kept at most; past it (after the expired ones are removed) a long call runs as a plain call."""
MAX_RECORD_BYTES = 16 * 1024 * 1024
"""A task's file at most; a larger one is not read (and a result past it is not kept: the task fails)."""
CANCEL_CHECK = 0.5
"""Seconds between a running task's looks for a cancellation asked by another process."""
TERMINAL = ("completed", "failed", "cancelled")
STATUSES = ("working", "input_required", *TERMINAL)
_ID = re.compile(r"[0-9a-f]{32}")
_PUBLIC = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")


def declares(capabilities: Any) -> bool:
    """Whether a request's client capabilities declare the tasks extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def missing_capability() -> tuple[int, str, dict[str, Any]]:
    """The ``-32021`` error (code, message, data) for a ``tasks/*`` request from a client that does not declare the extension."""
    return (
        MISSING_CAPABILITY,
        f"Missing required client capability: tasks/* requests need the {EXTENSION} extension in "
        "params._meta['io.modelcontextprotocol/clientCapabilities'].extensions",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def directory() -> Path:
    return state_home() / "fsmcp" / "tasks"


def _now() -> tuple[float, str]:
    now = time.time()
    return now, datetime.fromtimestamp(now, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), or None when there is none: a pid alone may be reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


_ME = (os.getpid(), None)


def _owner() -> dict[str, Any]:
    """This process, as a task's file names the process running it."""
    global _ME
    if _ME[0] != os.getpid() or _ME[1] is None:  # a forked server is another process
        _ME = (os.getpid(), _process_start(os.getpid()))
    return {"pid": _ME[0], "start": _ME[1]}


def _alive(owner: Any) -> bool:
    """Whether the process a task's file names still runs (True when that cannot be told)."""
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int) or isinstance(owner.get("pid"), bool):
        return False
    if not os.path.isdir("/proc/self"):
        return True
    start = _process_start(owner["pid"])
    return start is not None and start == owner.get("start")


class TaskStore:
    """The task files of this user, in :func:`directory` (made, and checked, at the first task)."""

    def __init__(self, roots: Iterable[Path]):
        self._roots = list(roots)
        self._checked: Path | None = None

    def place(self) -> Path:
        """The directory, checked apart from the roots and private (ValueError saying what is wrong)."""
        real = Path(os.path.realpath(directory()))
        if self._checked != real:
            fix = "set XDG_STATE_HOME to a directory of this user's outside every root"
            apart(real, self._roots, "the task store", fix, "tools would reach the tasks' results")
            private_dir(real, "the task store", fix, "forge a task's status or result", "the tasks' results")
            self._checked = real
        return real

    # -- the owner's side ---------------------------------------------------------------------

    def create(self, tool: str) -> dict[str, Any] | None:
        """A new task, ``working``, written before its ID is handed out; None when no task can be
        kept now (the store cannot be made, or is full): the call then runs as a plain call."""
        try:
            place = self.place()
            self._purge(place)
        except (ValueError, OSError) as exc:
            log.warning("no task for %s: %s; it runs as a plain call", tool, exc)
            return None
        now, stamp = _now()
        task = {
            "taskId": os.urandom(16).hex(),
            "status": "working",
            "statusMessage": f"{tool} is running",
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        record = {**task, "created": now, "owner": _owner(), "tool": tool}
        try:
            self._write(place, record)
        except OSError as exc:
            log.warning("no task for %s: its file cannot be written (%s); it runs as a plain call", tool, exc)
            return None
        return record

    def update(self, record: dict[str, Any], status: str, message: str | None, **payload: Any) -> None:
        """Write ``record`` with its new status (and ``result``, ``error`` or ``inputRequests``)."""
        now, stamp = _now()
        for key in ("result", "error", "inputRequests"):
            record.pop(key, None)
        record.update(status=status, lastUpdatedAt=stamp, **payload)
        if message is None:
            record.pop("statusMessage", None)
        else:
            record["statusMessage"] = message
        if status in TERMINAL:
            record["ttlMs"] = max(TTL_MS, int((now - record["created"]) * 1000) + KEPT_AFTER_END_MS)
        try:
            self._write(self.place(), record)
        except (ValueError, OSError) as exc:
            log.error("task %s: its %s status cannot be kept: %s", record["taskId"], status, exc)
            if status != "completed" or not isinstance(exc, OSError) or exc.errno != errno.EFBIG:
                return
            self.update(
                record, "failed", "the tool's result was too large to keep as a task's result; call the tool without the tasks extension",
                error={"code": -32603, "message": f"the result was past {MAX_RECORD_BYTES:,} bytes, the most a task keeps"},
            )

    def _write(self, place: Path, record: dict[str, Any]) -> None:
        data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(data) > MAX_RECORD_BYTES:
            raise OSError(errno.EFBIG, f"the task's record would be {len(data):,} bytes, past {MAX_RECORD_BYTES:,}")
        final = place / f"{record['taskId']}.json"
        temporary = place / f".{record['taskId']}.{os.urandom(4).hex()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temporary, final)  # a reader sees the old file or the new one, whole
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise

    def _purge(self, place: Path) -> None:
        """Remove the expired tasks' files (and temporaries left by a process that died); raise
        OSError when the store is still full."""
        now = time.time()
        kept = 0
        with os.scandir(place) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") and name.endswith(".tmp"):
                    try:
                        if now - entry.stat(follow_symlinks=False).st_mtime > 60:
                            os.unlink(entry.path)
                    except OSError:
                        pass
                    continue
                if name.endswith(".cancel") and _ID.fullmatch(name[:-7]):
                    if not os.path.lexists(place / f"{name[:-7]}.json"):  # its task is gone
                        try:
                            os.unlink(entry.path)
                        except OSError:
                            pass
                    continue
                if not name.endswith(".json") or not _ID.fullmatch(name[:-5]):
                    continue
                record = self._load(place, name[:-5])
                if record is None or self._expired(record, now):
                    try:
                        os.unlink(entry.path)
                    except FileNotFoundError:
                        pass
                    continue
                kept += 1
        if kept >= MAX_TASKS:
            raise OSError(f"the task store holds {kept} tasks within their TTL, its most ({MAX_TASKS})")

    @staticmethod
    def _expired(record: dict[str, Any], now: float) -> bool:
        ttl = record.get("ttlMs")
        if ttl is None:
            return False
        if now - record["created"] <= ttl / 1000:
            return False
        # A task still running in a live process is not taken from under it.
        return record["status"] in TERMINAL or not _alive(record.get("owner"))

    def cancel_asked(self, task_id: str) -> bool:
        """Whether another process asked to cancel the task (:meth:`ask_cancel`)."""
        try:
            return os.path.lexists(self.place() / f"{task_id}.cancel")
        except (ValueError, OSError):
            return False

    def forget_cancel(self, task_id: str) -> None:
        try:
            os.unlink(self.place() / f"{task_id}.cancel")
        except (ValueError, OSError):
            pass

    # -- anyone's side --------------------------------------------------------------------------

    def get(self, task_id: Any) -> dict[str, Any] | None:
        """The task as ``tasks/get`` answers it, or None when there is no such task (or it expired)."""
        if not isinstance(task_id, str) or not _ID.fullmatch(task_id):
            return None
        try:
            place = self.place()
        except (ValueError, OSError) as exc:
            log.warning("the task store cannot be read: %s", exc)
            return None
        record = self._load(place, task_id)
        if record is None or self._expired(record, time.time()):
            return None
        if record["status"] not in TERMINAL and not _alive(record.get("owner")):
            # The process running it ended (killed, or its client left) before it could say so.
            record = {
                **record,
                "status": "failed",
                "statusMessage": "the server process running this task ended before the task did; call the tool again",
                "error": {"code": -32603, "message": "the server process running this task ended before the task did"},
            }
        return shown(record)

    def ask_cancel(self, task_id: str) -> None:
        """Ask the process running the task (another one) to cancel it: it looks for this mark
        every :data:`CANCEL_CHECK` seconds. The task must exist (:meth:`get`)."""
        try:
            fd = os.open(self.place() / f"{task_id}.cancel", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            return
        except (ValueError, OSError) as exc:
            log.warning("task %s: the cancellation cannot be passed on to the process running it: %s", task_id, exc)
            return
        os.close(fd)

    def _load(self, place: Path, task_id: str) -> dict[str, Any] | None:
        """The task's file, read as untrusted: this user's regular file, bounded, of the expected shape; else None."""
        try:
            fd = os.open(place / f"{task_id}.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > MAX_RECORD_BYTES:
                log.warning("task file %s is not one this server wrote (type, owner or size); ignored", task_id)
                return None
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(MAX_RECORD_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            record = json.loads(data)
        except ValueError:
            log.warning("task file %s is not JSON; ignored", task_id)
            return None
        if not _well_formed(record, task_id):
            log.warning("task file %s does not have a task's fields; ignored", task_id)
            return None
        return record


def _well_formed(record: Any, task_id: str) -> bool:
    if not isinstance(record, dict) or record.get("taskId") != task_id or record.get("status") not in STATUSES:
        return False
    if not all(isinstance(record.get(key), str) for key in ("createdAt", "lastUpdatedAt")):
        return False
    created, ttl, poll = record.get("created"), record.get("ttlMs"), record.get("pollIntervalMs")
    if not isinstance(created, (int, float)) or isinstance(created, bool):
        return False
    if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0):
        return False
    if poll is not None and (not isinstance(poll, int) or isinstance(poll, bool) or poll < 0):
        return False
    if "statusMessage" in record and not isinstance(record["statusMessage"], str):
        return False
    need = {"completed": "result", "failed": "error", "input_required": "inputRequests"}.get(record["status"])
    return need is None or isinstance(record.get(need), dict)


def shown(record: dict[str, Any]) -> dict[str, Any]:
    """A task as the client sees it: its public fields and the payload of its status, nothing of the store's own."""
    task = {key: record[key] for key in _PUBLIC if key in record}
    for key in ("result", "error", "inputRequests"):
        if key in record:
            task[key] = record[key]
    return task
