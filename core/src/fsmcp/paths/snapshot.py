"""Saved copies of paths inside the roots, and putting them back (:meth:`FileSystem.snapshot`)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from . import dirfd, temporaries
from .confine import Confinement, Created
from ..api.errors import ToolError
from .roots import ResolvedPath


class Snapshot:
    """What :meth:`FileSystem.snapshot` recorded; see there.

    The copies live in a private temporary directory outside the roots; inside the roots every
    read and every change goes through the roots' descriptors like any other primitive.
    """

    def __init__(
        self, conf: Confinement, restored: Callable[..., None] = lambda *paths: None, check_cancelled: Callable[[], None] = lambda: None
    ) -> None:
        self._conf = conf
        self._check_cancelled = check_cancelled
        """The call's: a copy being recorded stops when it is cancelled (a restore never does)."""
        self._restored = restored
        self._store, self._noted = _store()
        self._saved: list[tuple[ResolvedPath, str | None, ResolvedPath | None]] = []
        self._seen: set[Path] = set()

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

    def restore(self) -> None:
        """Put every recorded path back, newest record first; then forget the copies.

        Raises OSError when a path could not be put back; the copies are then kept.
        """
        try:
            # A restore runs to the end even for a cancelled call (its copies are not handed the
            # call's check): stopping half-way would leave the mix of old and new that the snapshot exists to undo.
            with self._opened() as store:
                for p, copy, first_missing in reversed(self._saved):
                    self._clear(first_missing or p)
                    if copy is not None:
                        self._put(store, copy, p)
        except ToolError as exc:
            # A link swapped in on the way out of the roots: as much a failure to restore as a full disk.
            raise PermissionError(errno.EACCES, exc.message) from None
        finally:
            self._restored(*(p.path for p, _, _ in self._saved))
        self.discard()

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
