"""What a watched path holds now, seen only through ``ctx.fs``: the state that calls compare."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fsmcp import ErrorCode, FileSystem, ToolError, kind_of

# A name that vanished, turned into a file, or that a policy refuses is simply not there...
_ABSENT = {ErrorCode.NOT_FOUND, ErrorCode.NOT_DIRECTORY, ErrorCode.ACCESS_DENIED}
# ...and below the watched path, neither is one the server's user may not see, as walks skip them.
_ABSENT_BELOW = _ABSENT | {ErrorCode.PERMISSION_DENIED}


class Stopped(Exception):
    """The call ended while its scan was still running in a worker thread."""


@dataclass(frozen=True, slots=True)
class Meta:
    kind: str
    dev: int
    ino: int
    size: int
    mtime_ns: int

    def same_object(self, other: Meta) -> bool:
        return (self.dev, self.ino, self.kind) == (other.dev, other.ino, other.kind)


@dataclass
class State:
    """``entries`` maps ``""`` (the watched path itself) and paths relative to it to their metadata."""

    top: str
    entries: dict[str, Meta]
    dirs: list[str]
    """The directories whose entries this state covers: the notify engine watches these."""
    seconds: float
    """How long the last full scan took."""


class Scanner:
    """Scans one watched path, whole or in part, through ``fs`` only."""

    def __init__(self, fs: FileSystem, top: str, recursive: bool, limit: int, stop: threading.Event):
        self.fs, self.top, self.recursive, self.limit, self.stop = fs, top, recursive, limit, stop

    def scan(self) -> State | None:
        """The whole state now, or None when the watched path is gone."""
        started = time.perf_counter()
        own = self.meta(self.top, follow_links=True)
        if own is None:
            return None
        entries = {"": own}
        if own.kind == "directory":
            try:
                self._add_tree(entries, self.top, "", None if self.recursive else 1)
            except ToolError as exc:
                if exc.code in _ABSENT:
                    return None
                raise
        return State(self.top, entries, self._dirs(entries), time.perf_counter() - started)

    def refresh(self, state: State, paths: Iterable[str]) -> State | None:
        """``state`` with ``paths`` (named by notifications, inside it) looked at again."""
        entries = dict(state.entries)
        for path in sorted(paths):  # a directory before what lies in it
            if self.stop.is_set():
                raise Stopped
            if path == self.top:
                own = self.meta(self.top, follow_links=True)
                if own is None:
                    return None
                if not own.same_object(entries[""]):
                    return self.scan()
                entries[""] = own
                continue
            rel = os.path.relpath(path, self.top)
            old = entries.pop(rel, None)
            if old is not None and old.kind == "directory":
                for key in [k for k in entries if k.startswith(rel + "/")]:
                    del entries[key]
            meta = self.meta(path, follow_links=False)
            if meta is None:
                continue
            self._check_limit(entries)
            entries[rel] = meta
            if meta.kind == "directory" and self.recursive:
                # A directory that arrives (made or moved in) may hold entries no watcher saw.
                self._add_tree(entries, path, rel + "/", None)
        return State(self.top, entries, self._dirs(entries), state.seconds)

    def meta(self, path: str, *, follow_links: bool) -> Meta | None:
        try:
            st = self.fs.stat(path, follow_links=follow_links)
        except ToolError as exc:
            if exc.code in (_ABSENT if path == self.top else _ABSENT_BELOW):
                return None
            raise
        return Meta(kind_of(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def born(self, rel: str) -> int | None:
        """When the entry ``rel`` (relative to the watched path) was made; None where unknown."""
        try:
            return self.fs.born(os.path.join(self.top, rel) if rel else self.top)
        except ToolError:
            return None

    def moved_to(self, old: Meta) -> str | None:
        """Where the vanished watched path went, if it is still in its directory under a new name."""
        try:
            for seen, (_rel, _depth, entry) in enumerate(self.fs.walk(str(Path(self.top).parent), max_depth=1)):
                if self.stop.is_set():
                    raise Stopped
                if seen >= self.limit:
                    return None
                if entry.kind == old.kind:
                    meta = self.meta(str(entry.path), follow_links=False)
                    if meta is not None and meta.same_object(old):
                        return str(entry.path)
        except ToolError:
            return None
        return None

    def _add_tree(self, entries: dict[str, Meta], directory: str, prefix: str, max_depth: int | None) -> None:
        for rel, _depth, entry in self.fs.walk(directory, max_depth=max_depth):
            if self.stop.is_set():
                raise Stopped
            meta = self.meta(str(entry.path), follow_links=False)
            if meta is not None:
                self._check_limit(entries)
                entries[prefix + rel] = meta

    def _check_limit(self, entries: dict[str, Meta]) -> None:
        if len(entries) > self.limit:  # the watched path's own entry is one of them
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{self.top} holds more than {self.limit:,} entries, the watch limit (max_entries); "
                "watch a subdirectory" + (", or pass recursive: false" if self.recursive else ""),
                {"limit": self.limit},
            )

    def _dirs(self, entries: dict[str, Meta]) -> list[str]:
        if entries[""].kind != "directory":
            return [str(Path(self.top).parent)]
        if not self.recursive:
            return [self.top]
        return [self.top] + [os.path.join(self.top, rel) for rel, m in entries.items() if rel and m.kind == "directory"]
