"""Reaching a resolved path from its root's open descriptor, one real directory at a time.

The path policy answers with a path; between that answer and the use, any directory on the way
may be swapped for a symbolic link to somewhere else. So nothing here asks the kernel to follow
a link: each component is opened with ``O_NOFOLLOW`` relative to the one before it, starting
from a descriptor of the root opened once, at start-up. A link met on the way is read here and
its target goes back through the path policy, as if the client had named it; a swap can make
an operation fail or land elsewhere inside the roots, never outside them.
"""

from __future__ import annotations

import errno
import os
import stat
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from . import dirfd
from ..api.errors import ErrorCode, ToolError
from ..api.names import echoed
from .roots import Access, ResolvedPath, Root

Resolver = Callable[[str, Access, bool], ResolvedPath]
Created = list[tuple[int, str]]
"""Directories made on the way: (a descriptor of the parent, name), newest last."""

MAX_HOPS = 40
"""Links followed for one path before giving up, as the kernel's own limit."""


class Place(NamedTuple):
    """Where a path's last component lives: an open parent directory and the name in it.

    ``name`` is ``"."`` when the path is a root itself (``fd`` is then the root's).
    ``path`` is what was reached: the path asked for, or where a link on the way led.
    """

    fd: int
    name: str
    path: ResolvedPath


class Confinement:
    """The roots' descriptors and the walk from them. Thread-safe: it holds no per-call state."""

    def __init__(self, roots: list[Root], resolver: Resolver, *, naive: bool = False):
        self._resolver = resolver
        # The race test's control: with the kernel following links in directories (the old
        # check-then-use by name) it must find an escape. Not reachable from configuration.
        self._dir_flags = dirfd.SEARCH & ~dirfd.NOFOLLOW if naive else dirfd.SEARCH
        anchors = []
        for root in sorted({r.path for r in roots}, key=lambda p: len(p.parts), reverse=True):
            try:
                fd = os.open(root, dirfd.SEARCH)
            except OSError:
                continue  # vanished since start-up: its paths find no anchor and are refused
            prefix = str(root).rstrip("/") + "/"
            anchors.append((str(root), prefix, fd))
        self._anchors = anchors
        self._fds = {fd for _, _, fd in anchors}
        weakref.finalize(self, _close_all, list(self._fds))

    def _anchor(self, p: ResolvedPath) -> tuple[str, list[str], int]:
        text = str(p.path)
        for root, prefix, fd in self._anchors:  # deepest first
            if text == root:
                return root, [], fd
            if text.startswith(prefix):
                parts = text[len(prefix):].split("/")
                if ".." in parts:
                    # A policy hands back real paths; ".." from the root's descriptor would climb out.
                    raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} is not a resolved path (it holds '..')")
                return root, parts, fd
        raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} is outside the allowed directories")

    @contextmanager
    def at(self, p: ResolvedPath, created: Created | None = None) -> Iterator[Place]:
        """The open parent of ``p``'s last component; missing directories are made into ``created``."""
        place = self.reach(p, created)
        try:
            yield place
        finally:
            self.release(place.fd)

    def reach(self, p: ResolvedPath, created: Created | None = None) -> Place:
        """As :meth:`at`, for a caller that releases ``place.fd`` itself (a hot path)."""
        for _ in range(MAX_HOPS):
            root, parts, fd = self._anchor(p)
            try:
                for i, name in enumerate(parts[:-1]):
                    nxt = self._enter(fd, name, created)
                    if nxt is None:
                        target = dirfd.readlink(fd, name)
                        if target is not None:
                            p = self.redirect(p, os.path.join(root, *parts[:i]), target, parts[i + 1:])
                        break  # walk again: to where the link leads, or the same way if it is gone
                    self.release(fd)
                    fd = nxt
                else:
                    return Place(fd, parts[-1] if parts else ".", p)
            except BaseException:
                self.release(fd)
                raise
            self.release(fd)
        raise loop_error(p)

    def _enter(self, fd: int, name: str, created: Created | None) -> int | None:
        """The directory ``name`` below ``fd``, or None when it is a symbolic link."""
        while True:
            try:
                return os.open(name, self._dir_flags, dir_fd=fd)
            except FileNotFoundError:
                if created is None:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                    created.append((os.dup(fd), name))
                except FileExistsError:
                    pass  # made meanwhile: entered like any other
                created = None
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                mode = dirfd.lstat(fd, name).st_mode
                if stat.S_ISLNK(mode):
                    return None
                if not stat.S_ISDIR(mode):
                    raise
                # A link a moment ago, a directory again now: open it again.

    def release(self, fd: int) -> None:
        """Close a descriptor :meth:`reach` returned, unless it is a root's."""
        if fd not in self._fds:
            os.close(fd)

    def resolve(self, raw: str, access: Access, follow_links: bool) -> ResolvedPath:
        """The path policy's answer for ``raw``.

        The policy's ``realpath`` reads links by name: one swapped away between its ``lstat``
        and its ``readlink`` fails with EINVAL or ENOENT, and the path is resolved again.
        """
        for _ in range(MAX_HOPS):
            try:
                return self._resolver(raw, access, follow_links)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOENT):
                    raise
        raise ToolError(
            ErrorCode.ACCESS_DENIED,
            f"{echoed(raw)} kept changing while it was being resolved (a symbolic link on the way is being swapped); try again",
        )

    def redirect(self, p: ResolvedPath, here: str, target: str, rest: tuple[str, ...] | list[str]) -> ResolvedPath:
        """Where a link met at ``here`` leads, through the path policy like any path a client names."""
        raw = os.path.join(here, target, *rest)
        try:
            return self.resolve(raw, p.access, p.follows_links)
        except ToolError as exc:
            if exc.code is not ErrorCode.ACCESS_DENIED:
                raise
            raise ToolError(
                ErrorCode.ACCESS_DENIED,
                f"{p} changed while in use: a symbolic link on the way now leads outside the allowed directories",
            ) from None


def loop_error(p: ResolvedPath) -> ToolError:
    return ToolError(ErrorCode.ACCESS_DENIED, f"{p} goes through more than {MAX_HOPS} symbolic links (a loop?)")


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
