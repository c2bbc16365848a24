"""Saved copies of paths inside the roots, and putting them back (:meth:`FileSystem.snapshot`)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from . import dirfd, temporaries
from .roots import Confinement, Created, ResolvedPath
from ..api.errors import ToolError


class Snapshot:
    """What :meth:`FileSystem.snapshot` recorded; see there.

    The copies live in a private temporary directory outside the roots; inside the roots every
    read and every change goes through the roots' descriptors like any other primitive.
    """

    def __init__(
        self, conf: Confinement, restored: Callable[..., None] = lambda *paths: None, check_cancelled: Callable[[], None] = lambda: None,
        hold: Callable[[Path], None] = lambda path: None,
    ) -> None:
        self._conf = conf
        self._hold = hold
        """The call's lock on a path, held to its end: a path is looked at and put back under it."""
        self._check_cancelled = check_cancelled
        """The call's: a copy being recorded stops when it is cancelled (a restore never does)."""
        self._restored = restored
        self._store, self._noted = _store()
        self._saved: list[tuple[ResolvedPath, str | None, ResolvedPath | None]] = []
        self._seen: set[Path] = set()
        self._left: dict[Path, object] = {}
        """What each path was as the call that changed it left it (:meth:`left`)."""
        self._others: set[Path] = set()
        """Paths someone else changed between the call's changes (:meth:`before`)."""

    def add(self, p: ResolvedPath) -> bool:
        """Record one more path (a second record of the same path is ignored).

        True when what was saved is a directory: a restore would put back a whole tree."""
        if p.path in self._seen:
            return False
        self._seen.add(p.path)
        if not self._exists(p):
            first_missing = p
            while not self._exists(parent := ResolvedPath(first_missing.path.parent, p.root, p.access, False)):
                first_missing = parent
            self._saved.append((p, None, first_missing))
            return False
        copy = str(len(self._saved))
        with self._conf.at(p) as place, self._opened() as store:
            dirfd.copy_node(place.fd, place.name, store, copy, self._check_cancelled)
            tree = stat.S_ISDIR(dirfd.lstat(store, copy).st_mode)
        self._saved.append((p, copy, None))
        return tree

    def left(self, near: Iterable[Path] | None = None) -> None:
        """Note the recorded paths as they are now, the change they were saved for done (``near``:
        only those at, in or around these paths, which a later change of the same call touched).
        :meth:`changed` then tells which ones someone else changed since."""
        near = None if near is None else list(near)
        for p, _, first_missing in self._saved:
            whole = first_missing or p
            if p.path not in self._others and (near is None or _overlaps(whole.path, near)):
                self._left[p.path] = self._state(whole)

    def before(self, near: Iterable[Path]) -> None:
        """Before a later change of the same call touches ``near``: the recorded paths at, in or
        around them that changed since :meth:`left` were changed by someone else."""
        near = list(near)
        for p, _, first_missing in self._saved:
            whole = first_missing or p
            if p.path in self._left and _overlaps(whole.path, near) and self._state(whole) != self._left[p.path]:
                self._others.add(p.path)

    def paths(self) -> list[Path]:
        """The recorded paths, and the first missing directory above each path that was absent."""
        return [(first_missing or p).path for p, _, first_missing in self._saved]

    def changed(self) -> set[Path]:
        """The recorded paths someone else changed since :meth:`left` noted them, looked at under
        each path's lock (held to the call's end, so nothing changes them before :meth:`restore`)."""
        found = set()
        for p, _, first_missing in self._saved:
            whole = first_missing or p
            self._hold(p.path)
            self._hold(whole.path)
            if p.path in self._others or (p.path in self._left and self._state(whole) != self._left[p.path]):
                found.add(p.path)
        return found

    def restore(self, kept: set[Path] = frozenset()) -> None:
        """Put every recorded path back, newest record first, but those in ``kept`` (what someone
        else changed since, :meth:`changed`: putting it back would destroy their work, which
        nothing records); then forget the copies.

        Raises OSError when a path could not be put back; the copies are then kept.
        """
        try:
            # A restore runs to the end even for a cancelled call (its copies are not handed the
            # call's check): stopping half-way would leave the mix of old and new that the snapshot exists to undo.
            with self._opened() as store:
                for p, copy, first_missing in reversed(self._saved):
                    if p.path in kept:
                        continue
                    self._clear(first_missing or p)
                    if copy is not None:
                        self._put(store, copy, p)
        except ToolError as exc:
            # A link swapped in on the way out of the roots: as much a failure to restore as a full disk.
            raise PermissionError(errno.EACCES, exc.message) from None
        finally:
            self._restored(*(p.path for p, _, _ in self._saved))
        self.discard()

    def _state(self, p: ResolvedPath) -> object:
        """What ``p`` is now, down to every entry of a tree (their identities, as a version is); None: absent."""
        try:
            with self._conf.at(p) as place:
                if not dirfd.lexists(place.fd, place.name):
                    return None
                return tuple(_identities(place.fd, place.name))
        except (FileNotFoundError, NotADirectoryError):
            return None

    def discard(self) -> None:
        dirfd.remove_tree_quietly(str(self._store))
        if not self._store.exists():
            temporaries.LEDGER.done(self._noted)
        self._saved.clear()

    @contextmanager
    def _opened(self) -> Iterator[int]:
        fd = os.open(self._store, dirfd.LIST)
        try:
            yield fd
        finally:
            os.close(fd)

    def _exists(self, p: ResolvedPath) -> bool:
        try:
            with self._conf.at(p) as place:
                return dirfd.lexists(place.fd, place.name)
        except (FileNotFoundError, NotADirectoryError):
            return False

    def _clear(self, p: ResolvedPath) -> None:
        try:
            with self._conf.at(p) as place:
                if place.name != ".":
                    if dirfd.lexists(place.fd, place.name):
                        # Gone from its name at once, then deleted: never half a tree under it.
                        gone = temporaries.temp_name(place.name)
                        with temporaries.aside(place.fd, place.name, gone, restore=False):
                            dirfd.remove_node(place.fd, gone)
                    return
                # A root is emptied, never removed: its descriptor must stay the root's.
                for name in _names(place.fd, "."):
                    dirfd.remove_node(place.fd, name)
        except (FileNotFoundError, NotADirectoryError):
            pass

    def _put(self, store: int, copy: str, p: ResolvedPath) -> None:
        created: Created = []
        try:
            with self._conf.at(p, created) as place:
                if place.name != ".":
                    # Copied under a temporary name, then renamed: a crash leaves no half copy at the name.
                    tmp = temporaries.temp_name(place.name)
                    with temporaries.temporary(place.fd, tmp) as noted:
                        try:
                            dirfd.copy_node(store, copy, place.fd, tmp)
                            temporaries.LEDGER.made(noted, place.fd, tmp)
                            os.rename(tmp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
                        except BaseException:
                            dirfd.remove_quietly(place.fd, tmp)
                            raise
                    return
                saved = os.open(copy, dirfd.LIST, dir_fd=store)
                try:
                    for name in _names(saved, "."):
                        dirfd.copy_node(saved, name, place.fd, name)
                finally:
                    os.close(saved)
        finally:
            for fd, _ in created:
                os.close(fd)


def _overlaps(path: Path, near: list[Path]) -> bool:
    return any(path == q or path.is_relative_to(q) or q.is_relative_to(path) for q in near)


def _identities(dir_fd: int, name: str) -> Iterator[tuple[object, ...]]:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    yield ("", st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if not stat.S_ISDIR(st.st_mode):
        return
    for top, dirs, files, fd in os.fwalk(name, dir_fd=dir_fd):
        for entry in sorted((*dirs, *files)):
            st = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            yield (f"{top}/{entry}", st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _names(dir_fd: int, name: str) -> list[str]:
    fd = os.open(name, dirfd.LIST, dir_fd=dir_fd)
    try:
        with os.scandir(fd) as it:
            return [e.name for e in it]
    finally:
        os.close(fd)


def _store() -> tuple[Path, int]:
    """A private directory in the system's temporary directory, in the ledger before it exists."""
    top = tempfile.gettempdir()
    fd = os.open(top, dirfd.LIST)
    try:
        name = temporaries.temp_name("fsmcp-snapshot")
        noted = temporaries.LEDGER.note({"t": "tmp", **temporaries.where(fd), "name": name})
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except BaseException:
            temporaries.LEDGER.done(noted)
            raise
        temporaries.LEDGER.made(noted, fd, name)
    finally:
        os.close(fd)
    return Path(top) / name, noted
