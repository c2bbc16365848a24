"""What wakes a waiting call: the kernel's change notifications (watchfiles, on Rust notify) or a timer.

An engine never decides what changed. It says when to look again, and the notify engine also
where; every event then comes from looking through ``ctx.fs``, so a name a notification carries
is never shown to the client as it is.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import anyio.to_thread

POLL_SECONDS = 0.1
"""poll: the shortest interval between two scans..."""
POLL_DUTY = 4
"""...which is at least this many times as long as a scan takes: scanning stays under 1/5 of a core."""
STEP_MS = 20
"""notify: changes are gathered until none arrives for one step (a save is one look, not three)."""
DEBOUNCE_MS = 500
"""notify: ...but for no longer than this."""
RESCAN_SECONDS = 5.0
"""notify: a whole scan at least this often, for changes no notification reports (network mounts,
writes through a hard link elsewhere, a kernel queue overflow)..."""
RESCAN_DUTY = 20
"""...and at most once in this many scan durations, so it costs under 5 % of a core."""


class EngineUnavailable(Exception):
    """The notify engine cannot run here (watchfiles missing, no inotify, the watch limit reached)."""


class Waiter(Protocol):
    name: str

    def covers(self, dirs: list[str]) -> bool:
        """Whether a change in any of ``dirs`` would wake this waiter."""
        ...

    async def wait(self, seconds: float, stop: threading.Event) -> set[str] | None:
        """Paths that changed, or None: look at everything again."""
        ...

    async def drain(self) -> set[str]:
        """Paths that changed since the last wait, without waiting."""
        ...

    def close(self) -> None: ...


class PollWaiter:
    name = "poll"

    def __init__(self, scan_seconds: float):
        self._interval = max(POLL_SECONDS, POLL_DUTY * scan_seconds)

    def covers(self, dirs: list[str]) -> bool:
        return True

    async def wait(self, seconds: float, stop: threading.Event) -> set[str] | None:
        await anyio.sleep(min(seconds, self._interval))
        return None

    async def drain(self) -> set[str]:
        return set()

    def close(self) -> None:
        pass


class NotifyWaiter:
    """One watcher over a state's directories, each watched on its own, kept for the whole call.

    Never recursive: notify's recursive mode follows symlinks out of the roots. The watcher
    keeps gathering between two waits, so nothing is missed while the call scans.
    """

    name = "notify"

    def __init__(self, watcher: Any, dirs: list[str], scan_seconds: float):
        self._watcher = watcher
        self._dirs = set(dirs)
        self._rescan = max(RESCAN_SECONDS, RESCAN_DUTY * scan_seconds)

    @classmethod
    async def open(cls, dirs: list[str], scan_seconds: float) -> NotifyWaiter:
        watcher = await anyio.to_thread.run_sync(_start, dirs, abandon_on_cancel=True)
        return cls(watcher, dirs, scan_seconds)

    def covers(self, dirs: list[str]) -> bool:
        return self._dirs.issuperset(dirs)

    async def wait(self, seconds: float, stop: threading.Event) -> set[str] | None:
        # A cancelled call sets `stop`; the abandoned thread sees it within one step and returns.
        timeout_ms = max(1, int(min(seconds, self._rescan) * 1000))
        return await anyio.to_thread.run_sync(self._watch, DEBOUNCE_MS, STEP_MS, timeout_ms, stop, abandon_on_cancel=True)

    async def drain(self) -> set[str]:
        return await anyio.to_thread.run_sync(self._watch, 1, 1, 1, None) or set()

    def close(self) -> None:
        try:
            self._watcher.close()
        except RuntimeError:
            pass  # still inside a wait: dropped with the last reference once that thread returns

    def _watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop: threading.Event | None) -> set[str] | None:
        try:
            changes = self._watcher.watch(debounce_ms, step_ms, timeout_ms, stop)
        except RuntimeError as exc:  # e.g. a file name that is not UTF-8; this watcher stays broken
            raise EngineUnavailable(str(exc)) from None
        if isinstance(changes, str):  # "timeout", "stop" or "signal"
            return None
        return {path for _change, path in changes}


def _start(dirs: list[str]) -> Any:
    try:
        from watchfiles._rust_notify import RustNotify
    except ImportError as exc:
        raise EngineUnavailable(f"watchfiles is not installed ({exc})") from None
    try:
        # (paths, debug, force_polling, poll_delay_ms, recursive, ignore_permission_denied)
        return RustNotify(dirs, False, False, 0, False, False)
    except (FileNotFoundError, PermissionError):
        # A directory removed since the scan, or one that cannot be read: the scan after the
        # watcher starts sees the first, and the walk skips the second as well.
        try:
            return RustNotify(dirs, False, False, 0, False, True)
        except (OSError, RuntimeError) as exc:
            raise EngineUnavailable(str(exc)) from None
    except (OSError, RuntimeError) as exc:
        raise EngineUnavailable(str(exc)) from None


async def open_waiter(engine: str, dirs: list[str], scan_seconds: float) -> Waiter:
    """The waiter for ``engine``: notify or poll; EngineUnavailable when notify cannot run."""
    if engine == "poll":
        return PollWaiter(scan_seconds)
    return await NotifyWaiter.open(dirs, scan_seconds)
