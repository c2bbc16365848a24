"""The file-system primitives every tool uses. Plugins never open, list or stat a path by name.

Every primitive takes a raw path string (resolved here with the access it needs) or a
:class:`ResolvedPath` the host made earlier, so the path policy runs for every operation. Then
it acts through descriptors: the path is walked again from its root's open descriptor, one
directory at a time and never through a symbolic link (:mod:`fsmcp.paths.roots`), and the
operation names only the last component relative to its parent's descriptor. A link swapped
in between the policy's answer and the use cannot lead out of the roots.
"""

from __future__ import annotations

import errno
import io
import os
import stat as stat_mod
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

from . import consent, dirfd, temporaries
from .roots import MAX_HOPS, Access, Confinement, Created, Place, ResolvedPath, loop_error, shown
from ..api.errors import ErrorCode, OffLoop, ToolError
from .change import refuse_read_only
from .guard import Guard
from .policy import PathPolicy
from .snapshot import NOT_WATCHED, Snapshot, noting
from .temporaries import temp_name

if TYPE_CHECKING:
    from .change import Change

PathArg = str | ResolvedPath
T = TypeVar("T")

_UMASK = os.umask(0)
os.umask(_UMASK)
_child: Callable[[Path, str], Path] = getattr(Path, "_make_child_relpath", None) or Path.joinpath
"""A directory's entry's path: pathlib's own constructor for a name scandir gave skips parsing
it again, a quarter of a big walk's time; ``joinpath`` where an interpreter lacks it."""


@dataclass(frozen=True)
class Entry:
    """One directory entry, described without following links out of the roots (its fields: docs/writing-plugins.md)."""

    name: str
    kind: str
    size: int | None
    path: Path
    target_kind: str | None = None
    target: str | None = None


_ERRNO_CODES = {
    errno.ENOENT: (ErrorCode.NOT_FOUND, "does not exist; check the path (list_directory shows what is there)"),
    errno.EEXIST: (ErrorCode.ALREADY_EXISTS, "already exists; pass overwrite: true to replace it, or choose another name"),
    errno.ENOTDIR: (ErrorCode.NOT_DIRECTORY, "is not a directory (a path component is a file)"),
    errno.EISDIR: (ErrorCode.NOT_FILE, "is a directory, not a file; use list_directory or directory_tree"),
    errno.ENOTEMPTY: (ErrorCode.DIRECTORY_NOT_EMPTY, "is a directory that is not empty; pass recursive: true to delete it with its contents"),
    errno.EACCES: (ErrorCode.PERMISSION_DENIED, "is not accessible to the server's user (permission denied)"),
    errno.EPERM: (ErrorCode.PERMISSION_DENIED, "cannot be changed by the server's user (operation not permitted)"),
    errno.EROFS: (ErrorCode.READ_ONLY, "is on a read-only file system"),
    errno.ELOOP: (ErrorCode.ACCESS_DENIED, "is a symbolic link where none may be followed (or a link loop)"),
    errno.ENOSPC: (ErrorCode.INTERNAL_ERROR, "could not be written: no space left on the device; nothing was changed"),
    errno.EDQUOT: (ErrorCode.INTERNAL_ERROR, "could not be written: disk quota exceeded; nothing was changed"),
    errno.ENXIO: (ErrorCode.NOT_FILE, "is a device or pipe, not a regular file"),
    errno.ENAMETOOLONG: (ErrorCode.INVALID_PARAMS, "has a name too long for the file system"),
}


def os_error(exc: OSError, path: object = None) -> ToolError:
    """The ToolError for an OSError, naming the path and what to do next."""
    where = str(path) if isinstance(path, ResolvedPath) else shown(str(path if path is not None else (exc.filename or "the path")))
    code, advice = _ERRNO_CODES.get(exc.errno or 0, (ErrorCode.INTERNAL_ERROR, f"failed: {exc.strerror or exc}"))
    return ToolError(code, f"{where} {advice}", {"errno": exc.errno})


class _mapped:
    """An ``OSError`` met inside the block, raised as the ToolError its errno maps to for ``path``.

    A class, not a generator: every primitive enters one, and a generator's frame costs more."""

    __slots__ = ("path",)

    def __init__(self, path: object):
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, OSError):
            raise os_error(exc, self.path) from None


def kind_of(mode: int) -> str:
    """``file``, ``directory``, ``symlink`` or ``other``, for an ``st_mode``."""
    if stat_mod.S_ISLNK(mode):
        return "symlink"
    if stat_mod.S_ISDIR(mode):
        return "directory"
    if stat_mod.S_ISREG(mode):
        return "file"
    return "other"


QUICK_BYTES = 256 * 1024
"""File bytes a quick tool's call may open on the event loop before it moves to a worker thread."""


class _NoCall:
    """The call of a file system bound to none (the host's own work outside any call): no change
    to announce to, never cancelled, never on the event loop."""

    change: Change | None = None
    tool = None
    on_loop = False

    @staticmethod
    def check_cancelled() -> None:
        pass


NO_CALL: Any = _NoCall()


class _LinkHere(Exception):
    """The last component is (or was a moment ago) a link and the path follows links: look again."""


class FileSystem:
    """The host's primitives, bound to the path policy (:class:`fsmcp.paths.policy.PathPolicy`).

    ``naive=True`` is for the race test alone (``tests/test_race.py``): directories on the way
    are then opened following links, as a check-then-use by name would, so that the test can
    show it finds the escape this class otherwise closes. No setting reaches it.

    ``call`` is the tool call the primitives work for (a :class:`fsmcp.ToolContext`; see
    :meth:`for_call`): its ``change`` hears of every path before it changes, its
    ``check_cancelled`` stops long copies, and on the event loop (``on_loop``) its ``loop_bytes``
    count what it opened, past :data:`QUICK_BYTES` raising :class:`OffLoop`.
    """

    call: Any = NO_CALL

    def __init__(
        self,
        policy: PathPolicy,
        max_file_bytes: int,
        *,
        guard: Guard,
        naive: bool = False,
    ):
        # The host's guard, never one of its own: a call's locks are taken and released in one place.
        self.policy = policy
        self.roots = policy.roots
        self.max_file_bytes = max_file_bytes
        self.guard = guard
        self.confinement = Confinement(policy.roots.operator, policy.resolve, naive=naive)
        """The roots' descriptors, for the host's own modules that restore what they saved."""
        self._snapshots: list[Snapshot] = []
        """The live snapshots of the host's own work, outside any call (a call's are its change's)."""
        self.server = self
        """The server's own file system, which each call's (:meth:`for_call`) is bound from: the
        same object for the server's life, so a key for what a plugin keeps per server."""

    def for_call(self, call: Any) -> FileSystem:
        """This file system bound to ``call``: what a tool call's ``ctx.fs`` is. Made for every call: one copy of a small dict.

        The call is held by a weak proxy: the call holds its file system, and a cycle between
        the two would leave every call's context to the garbage collector, whose passes over
        the whole heap cost a warm call more than all of this (measured: read_file's CPU time
        up by a third). The call lives while it runs, and its file system is used only then."""
        view = object.__new__(FileSystem)
        view.__dict__.update(self.__dict__)
        view.call = weakref.proxy(call)
        return view

    def _changing(self, *paths: ResolvedPath, tree: bool = True, whole: bool = True, moving: bool = False, arrived: bool = False) -> Any:
        """Before a primitive changes ``paths``: their locks, the call's change told, and what the
        call's snapshots watch saved. Returns the context to hold around the change: it notes what
        the change left, for a rollback (``whole``, ``moving``, ``arrived``: see :func:`noting`)."""
        for p in paths:
            self.guard.hold(p.path)
        refuse_read_only(self.call.tool, paths)
        # Before anything changes (under the files' locks): the call's change hooks (the journal) see the old state.
        change = self.call.change
        if change is None:
            watching = self._snapshots
        else:
            change.before(paths, tree=tree, call=self.call)
            watching = change.snapshots
        if not watching:
            return NOT_WATCHED
        with _mapped(paths[0]):
            return noting(watching, paths, whole=whole, moving=moving, arrived=arrived)

    def _tree(self, p: ResolvedPath) -> bool:
        """Whether the entry at ``p`` (not followed) is, or may be, a directory: anything but a file or link."""
        try:
            return self.kind(p, follow_links=False) not in ("file", "symlink")
        except ToolError:
            return True

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, path: PathArg, access: Access = Access.READ, *, follow_links: bool = True) -> ResolvedPath:
        """Apply the path policy; raises ACCESS_DENIED or READ_ONLY as a ToolError."""
        if isinstance(path, ResolvedPath):
            if (path.access is Access.WRITE or access is Access.READ) and path.follows_links == follow_links:
                return path
            path = str(path.path)
        return self.confinement.resolve(path, access, follow_links)

    def _inside(self, here: Path, target: str) -> Path | None:
        """The real path a link at ``here`` with ``target`` leads to, when that is inside the roots."""
        real = Path(os.path.realpath(os.path.join(here, target)))
        return real if self.roots.containing(real) is not None else None

    def _final(self, p: ResolvedPath, op: Callable[[int, str], T], created: Created | None = None) -> T:
        """``op(parent_fd, name)`` at ``p``; a link found at the end is resolved here and tried again."""
        for _ in range(MAX_HOPS):
            place = self.confinement.reach(p, created)
            try:
                return op(place.fd, place.name)
            except _LinkHere:
                target = dirfd.readlink(place.fd, place.name)
            finally:
                self.confinement.release(place.fd)
            if target is not None:
                p = self.confinement.redirect(place.path, str(place.path.path.parent), target, ())
        raise loop_error(p)

    # -- metadata -----------------------------------------------------------------------------

    def stat(self, path: PathArg, *, follow_links: bool = True) -> os.stat_result:
        p = self.resolve(path, Access.READ, follow_links=follow_links)
        with _mapped(p):
            return self._final(p, lambda fd, name: _lstat(fd, name, p.follows_links))

    def born(self, path: PathArg) -> int | None:
        """When the entry at ``path`` (a link itself, not followed) was made, in ns since the epoch; None where unknown."""
        p = self.resolve(path, Access.READ, follow_links=False)
        with _mapped(p):
            return self._final(p, dirfd.birth_ns)

    def kind(self, path: PathArg, *, follow_links: bool = True) -> str | None:
        """``file``, ``directory``, ``symlink``, ``other``, or None when nothing is there."""
        p = self.resolve(path, Access.READ, follow_links=follow_links)
        try:
            return kind_of(self._final(p, lambda fd, name: _lstat(fd, name, p.follows_links)).st_mode)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise os_error(exc, p) from None

    def readlink(self, path: PathArg) -> str | None:
        """The link's target as written, or None when the target lies outside the roots."""
        p = self.resolve(path, Access.READ, follow_links=False)
        with _mapped(p):
            target = self._final(p, lambda fd, name: os.readlink(name, dir_fd=fd))
        return target if self._inside(p.path.parent, target) else None

    # -- reading ------------------------------------------------------------------------------

    def open_read(self, path: PathArg) -> BinaryIO:
        """A regular file opened for binary reading. The caller closes it.

        A file of up to :data:`SMALL_FILE` bytes comes read whole, in memory
        (an :class:`io.BytesIO` whose ``fileno()`` is the open file's descriptor).
        """
        p = self.resolve(path, Access.READ)
        if p.access is Access.WRITE:
            # A link swapped in on the way goes back through the policy as what this is, a read:
            # a file tools may change but not read (protected, allow_write) is not read through it.
            p = replace(p, access=Access.READ)
        self.guard.hold(p.path)
        with _mapped(p):
            fd, st = self._final(p, lambda dfd, name: _open_regular(p, dfd, name, os.O_RDONLY))
            try:
                if (asked := consent.CURRENT.get()) is not None:
                    asked.opened(p.path, st)
                call = self.call
                if call.on_loop:
                    call.loop_bytes += st.st_size
                    if call.loop_bytes > QUICK_BYTES:
                        raise OffLoop
                small = read_small(fd, st.st_size)
            except BaseException:
                os.close(fd)
                raise
            self.guard.opened(p.path, st)
            if small is not None:
                return small
            # The buffer's size given, so that io.open does not ask whether a file is a terminal.
            return io.open(fd, "rb", buffering=io.DEFAULT_BUFFER_SIZE)

    def read_bytes(self, path: PathArg, *, limit: int | None = None) -> bytes:
        """The whole file; FILE_TOO_LARGE past ``limit`` (default: the max_file_bytes setting)."""
        limit = self.max_file_bytes if limit is None else limit
        with self.open_read(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:
                raise ToolError(
                    ErrorCode.FILE_TOO_LARGE,
                    f"{self.resolve(path)} is {size:,} bytes, over the {limit:,}-byte limit; read a part of it (a line or byte range)",
                    {"size": size, "limit": limit},
                )
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise ToolError(ErrorCode.FILE_TOO_LARGE, f"{self.resolve(path)} grew past the {limit:,}-byte limit while being read")
        return data

    def list_dir(self, path: PathArg) -> list[Entry]:
        """The entries of a directory, sorted by name."""
        if self.call.on_loop:
            raise OffLoop  # a listing: work of unknown size
        p = self.resolve(path, Access.READ)
        with _mapped(p):
            fd = self._open_dir(p, "use read_file or get_file_info")
            try:
                with os.scandir(fd) as it:
                    entries = [self._entry(fd, p.path, e) for e in it]
            finally:
                os.close(fd)
        entries.sort(key=lambda e: e.name)
        return entries

    def _open_dir(self, p: ResolvedPath, advice: str) -> int:
        def open_dir(dfd: int, name: str) -> int:
            try:
                return os.open(name, dirfd.LIST, dir_fd=dfd)
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                if stat_mod.S_ISDIR(_lstat(dfd, name, p.follows_links).st_mode):
                    raise _LinkHere from None  # a link when opened, a directory again now
            raise ToolError(ErrorCode.NOT_DIRECTORY, f"{p} is a file, not a directory; {advice}")

        return self._final(p, open_dir)

    def _entry(self, dir_fd: int, directory: Path, d: os.DirEntry, sizes: bool = True) -> Entry:
        path = _child(directory, d.name)
        try:
            # The entry's type from the directory itself: no stat for directories and links,
            # nor for files when their size is not wanted.
            if d.is_dir(follow_symlinks=False):
                return Entry(d.name, "directory", None, path)
            if not sizes and d.is_file(follow_symlinks=False):
                return Entry(d.name, "file", None, path)
            if not d.is_symlink():
                st = d.stat(follow_symlinks=False)
                kind = kind_of(st.st_mode)
                return Entry(d.name, kind, st.st_size if kind == "file" else None, path)
            target = os.readlink(d.name, dir_fd=dir_fd)
        except OSError:
            return Entry(d.name, "other", None, path)
        # A link's target is described only when it lies inside the roots.
        real = self._inside(directory, target)
        if real is None:
            return Entry(d.name, "symlink", None, path)
        root = self.roots.containing(real)
        try:
            target_kind = kind_of(self.stat(ResolvedPath(real, root, Access.READ, True)).st_mode)  # type: ignore[arg-type]
        except ToolError:
            return Entry(d.name, "symlink", None, path)
        return Entry(d.name, "symlink", None, path, target_kind, target)

    def walk(
        self,
        path: PathArg,
        *,
        max_depth: int | None = None,
        prune: Callable[[str, Entry], bool] | None = None,
        breadth_first: bool = False,
        sizes: bool = True,
    ) -> Iterator[tuple[str, int, Entry]]:
        """Yield ``(relative path, depth, entry)`` for everything below ``path``, depth 1 the
        directory's own entries (the arguments: docs/writing-plugins.md)."""
        if self.call.on_loop:
            raise OffLoop  # a walk: work of unknown size
        top = self.resolve(path, Access.READ)
        with _mapped(top):
            top_fd = self._open_dir(top, "list the directory that holds it")
        chain = dirfd.DirChain(top_fd)
        try:
            pending: deque[tuple[tuple[str, ...], int]] = deque([((), 1)])
            while pending:
                parts, depth = pending.popleft() if breadth_first else pending.pop()
                directory = top.path.joinpath(*parts)
                try:
                    # Each level is opened from the one above with O_NOFOLLOW: a directory
                    # swapped for a link after it was listed is skipped, not entered.
                    fd = chain.open(parts)
                    with os.scandir(fd) as it:
                        entries = sorted((self._entry(fd, directory, e, sizes) for e in it), key=lambda e: e.name)
                except OSError:
                    continue
                rel_dir = "/".join(parts)
                below = []
                for entry in entries:
                    rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                    if prune is not None and prune(rel, entry):
                        continue
                    yield rel, depth, entry
                    if entry.kind == "directory" and (max_depth is None or depth < max_depth):
                        below.append((parts + (entry.name,), depth + 1))
                pending.extend(below if breadth_first else reversed(below))
        finally:
            chain.close()
            os.close(top_fd)

    # -- writing ------------------------------------------------------------------------------

    def write_atomic(
        self,
        path: PathArg,
        data: bytes | Iterable[bytes],
        *,
        overwrite: bool = True,
        make_parents: bool = True,
        mode: int | None = None,
    ) -> bool:
        """Replace or create a file all at once: temp file beside it, fsync, rename (docs/writing-plugins.md).

        Readers see the old content or the new, never a mix; a failure leaves the old file byte
        for byte as it was. The owner is kept where permitted.
        """
        p = self.resolve(path, Access.WRITE)
        noted = self._changing(p, tree=False, whole=False)
        if isinstance(data, (bytes, bytearray, memoryview)):
            self._check_size(len(data))
            data = [bytes(data)]
        chunks = data

        def write(dfd: int, name: str) -> bool:
            try:
                old = _lstat(dfd, name, p.follows_links)
            except FileNotFoundError:
                old = None
            if old is not None:
                if stat_mod.S_ISDIR(old.st_mode):
                    raise ToolError(ErrorCode.NOT_FILE, f"{p} is a directory; choose a file path")
                if not stat_mod.S_ISREG(old.st_mode):
                    raise ToolError(ErrorCode.NOT_FILE, f"{p} is a device, socket or pipe, not a regular file; it is not replaced")
                if not overwrite:
                    raise ToolError(ErrorCode.ALREADY_EXISTS, f"{p} already exists; pass overwrite: true to replace it")
            self.guard.check(p.path, old)
            file_mode = mode if mode is not None else stat_mod.S_IMODE(old.st_mode) if old else 0o666 & ~_UMASK
            tmp = temp_name(name)
            with temporaries.temporary(dfd, tmp) as noted:
                self._write_temp(dfd, tmp, noted, chunks, file_mode, old)
                _commit(dfd, tmp, name, overwrite)
            self.guard.knows(p.path, dirfd.lstat(dfd, name))
            return old is None

        with noted, self.guard.changing(p.path), _mapped(p), self._parents_undone_on_failure(make_parents) as created:
            return self._final(p, write, created)

    def _check_size(self, size: int) -> None:
        if size > self.max_file_bytes:
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{size:,} bytes is over the {self.max_file_bytes:,}-byte write limit (max_file_bytes); nothing was written",
            )

    def _write_temp(self, dfd: int, tmp: str, noted: int, chunks: Iterable[bytes], mode: int, old: os.stat_result | None) -> None:
        fd = os.open(tmp, dirfd.CREATE, 0o600, dir_fd=dfd)
        try:
            temporaries.LEDGER.made(noted, dfd, tmp)
            written = 0
            for chunk in chunks:
                written += len(chunk)
                self._check_size(written)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            if old is not None and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.fchown(fd, old.st_uid, old.st_gid)
                except PermissionError:
                    pass
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            dirfd.unlink_quietly(dfd, tmp)
            raise
        os.close(fd)

    @contextmanager
    def _parents_undone_on_failure(self, make_parents: bool) -> Iterator[Created | None]:
        # A failed write must change nothing, not even leave the directories made for it.
        created: Created = []
        try:
            yield created if make_parents else None
        except BaseException:
            for fd, name in reversed(created):
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError:
                    break
            raise
        finally:
            for fd, _ in created:
                os.close(fd)

    def append(self, path: PathArg, data: bytes, *, create: bool = False) -> int:
        """Append bytes; on failure the file is cut back to its old length. Returns the new size."""
        p = self.resolve(path, Access.WRITE)
        noted = self._changing(p, tree=False, whole=False)

        def append(dfd: int, name: str) -> int:
            fd, before, made = _open_for_append(p, dfd, name, create)
            try:
                self.guard.check(p.path, None if made else before)
                size = before.st_size
                try:
                    if size + len(data) > self.max_file_bytes:
                        raise ToolError(ErrorCode.FILE_TOO_LARGE, f"appending would make {p} larger than the {self.max_file_bytes:,}-byte limit")
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                    self.guard.knows(p.path, os.fstat(fd))
                except BaseException:
                    if made:
                        dirfd.unlink_quietly(dfd, name)
                    else:
                        os.ftruncate(fd, size)
                    raise
                return size + len(data)
            finally:
                os.close(fd)

        with noted, self.guard.changing(p.path), _mapped(p), self._parents_undone_on_failure(create) as created:
            return self._final(p, append, created)

    def mkdir(self, path: PathArg, *, parents: bool = True) -> bool:
        """Create a directory (and its parents); True when it did not exist before."""
        p = self.resolve(path, Access.WRITE)
        noted = self._changing(p, tree=False, whole=False)  # empty, as are the parents made for it

        def make(dfd: int, name: str) -> None:
            try:
                os.mkdir(name, 0o777, dir_fd=dfd)
            except FileExistsError:
                if not stat_mod.S_ISDIR(_lstat(dfd, name, p.follows_links).st_mode):
                    raise ToolError(ErrorCode.NOT_DIRECTORY, f"{p} exists and is not a directory") from None
                return
            made.append((os.dup(dfd), name))

        with noted, _mapped(p), self._parents_undone_on_failure(True) as made:
            try:
                self._final(p, make, made if parents else None)
            except FileNotFoundError:
                if parents:
                    raise
                raise ToolError(ErrorCode.NOT_FOUND, f"the parent of {p} does not exist") from None
            return bool(made)

    def chmod(self, path: PathArg, mode: int) -> None:
        """Set the permission bits of a file or directory (a link's target, inside the roots)."""
        p = self.resolve(path, Access.WRITE)
        # Ordered: a directory the server's user could not list when a program started (so its
        # protected files went unlisted) would open to that program, which runs as the same user.
        noted = self._changing(p, whole=False)

        def chmod(dfd: int, name: str) -> None:
            if not dirfd.chmod_at(dfd, name, stat_mod.S_IMODE(mode)):
                raise _LinkHere

        with noted, self.guard.changing(p.path), _mapped(p):
            self._final(p, chmod)
            self.guard.knows(p.path, self._final(p, lambda fd, name: _lstat(fd, name, p.follows_links)))

    def symlink(self, path: PathArg, target: str) -> None:
        """Create a symlink at ``path`` pointing to ``target`` (kept as written).

        The target, taken relative to the link's directory, must lie inside the roots: a link
        is never a way out. ``ACCESS_DENIED`` otherwise.
        """
        p = self.resolve(path, Access.WRITE, follow_links=False)
        if "\x00" in target or not target or not _encodable(target):
            raise ToolError(ErrorCode.INVALID_PARAMS, "a link target must be a non-empty path without NUL bytes or lone surrogates")
        if self._inside(p.path.parent, target) is None:
            raise ToolError(ErrorCode.ACCESS_DENIED, f"the link {p} would point to {target!r}, outside the allowed directories")
        # A link brings nothing into view: a program opening it meets its target, masked as it was.
        noted = self._changing(p, tree=False, whole=False)
        with noted, _mapped(p), self._parents_undone_on_failure(True) as created:
            self._final(p, lambda dfd, name: os.symlink(target, name, dir_fd=dfd), created)

    def bring(self, source: str, path: PathArg) -> None:
        """Put the file, link or tree at ``source``, outside the roots (a program's upper layer,
        :mod:`fsmcp.sandbox.commit`), at ``path``, where nothing is: by one rename on the same
        file system, else by a copy renamed into place. The journal records ``path`` absent,
        so an undo removes it whole.

        Everything it brings is checked first as a tool's write of it would be: each path
        through the path policy (a protected name refused), each link's target inside the roots,
        nothing but files, directories and links. Raises ``ToolError`` then, nothing moved.
        """
        p = self.resolve(path, Access.WRITE, follow_links=False)
        top, name = os.path.split(source)
        where = os.open(top, dirfd.LIST)
        try:
            # One entry at a time, as strings: a program's 100,000 new files cost no memory here.
            self._may_bring(source, str(p.path))
            if stat_mod.S_ISDIR(dirfd.lstat(where, name).st_mode):
                for rel in dirfd.tree_below(where, name):
                    self._may_bring(os.path.join(source, rel), os.path.join(p.path, rel))
            noted = self._changing(p, tree=True, arrived=True)
            with noted, self.guard.changing(p.path), ExitStack() as stack:
                created = stack.enter_context(self._parents_undone_on_failure(False))
                with _mapped(p):
                    d = stack.enter_context(self.confinement.at(p, created))
                    if dirfd.lstat_or_none(d.fd, d.name) is not None:
                        raise ToolError(ErrorCode.ALREADY_EXISTS, f"{p} already exists")
                    try:
                        os.rename(name, d.name, src_dir_fd=where, dst_dir_fd=d.fd)
                    except OSError as exc:
                        if exc.errno != errno.EXDEV:
                            raise
                        staging = temp_name(d.name)
                        with temporaries.temporary(d.fd, staging):
                            try:
                                dirfd.copy_node(where, name, d.fd, staging, self.call.check_cancelled)
                                os.rename(staging, d.name, src_dir_fd=d.fd, dst_dir_fd=d.fd)
                            except BaseException:
                                dirfd.remove_quietly(d.fd, staging)
                                raise
                    dirfd.fsync_dir(d.fd)
                self.guard.moved(p.path)
        finally:
            os.close(where)

    def _may_bring(self, source: str, path: str) -> None:
        st = os.lstat(source)
        if not (stat_mod.S_ISREG(st.st_mode) or stat_mod.S_ISDIR(st.st_mode) or stat_mod.S_ISLNK(st.st_mode)):
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{shown(path)} would be a FIFO, socket or device, which is not brought in")
        self.resolve(path, Access.WRITE, follow_links=False)
        if stat_mod.S_ISLNK(st.st_mode) and self._inside(Path(os.path.dirname(path)), os.readlink(source)) is None:
            raise ToolError(ErrorCode.ACCESS_DENIED, f"the link {shown(path)} would point to {os.readlink(source)!r}, outside the allowed directories")

    def snapshot(self, paths: Iterable[PathArg]) -> Snapshot:
        """Watch ``paths`` (files, links, whole trees, or their absence) for what this call changes there.

        What is saved when, and what ``restore()`` takes back or keeps: docs/writing-plugins.md (what
        someone else wrote into a directory the call made stays too).
        The copies live outside the roots, in the host's own temporary directory, until ``discard()``.
        """
        change = self.call.change
        watchers = change.snapshots if change is not None else self._snapshots
        snap = Snapshot(self.confinement, watchers, restored=self.guard.moved, check_cancelled=self.call.check_cancelled, hold=self.guard.hold)
        try:
            # Nothing is copied yet, so nothing waits its turn here: a tree is copied (and can come
            # back whole) only for a primitive that removes or moves it, which waits its turn then.
            for path in paths:
                snap.add(self.resolve(path, Access.WRITE, follow_links=False))
        except BaseException:
            snap.discard()
            raise
        return snap

    def remove(self, path: PathArg, *, recursive: bool = False) -> str:
        """Delete a file, link or directory (a link itself, never its target). Returns the kind."""
        p = self.resolve(path, Access.WRITE, follow_links=False)
        self._refuse_roots(p, "deleted")
        # A directory deleted may come back whole while programs run: its journal copy or a
        # rollback's puts it back, unlike a file, which holds nothing protected (its name aside).
        noted = self._changing(p, tree=self._tree(p))
        with noted, self.guard.changing(p.path), _mapped(p), self.confinement.at(p) as place:
            kind = kind_of(dirfd.lstat(place.fd, place.name).st_mode)
            if kind != "directory":
                os.unlink(place.name, dir_fd=place.fd)
            elif recursive:
                dirfd.remove_node(place.fd, place.name)
            else:
                os.rmdir(place.name, dir_fd=place.fd)
            dirfd.fsync_dir(place.fd)
            self.guard.moved(p.path)
        return kind

    def rename(self, source: PathArg, destination: PathArg, *, overwrite: bool = False) -> None:
        """Move a file, link or directory; a link moves as a link. Works across devices."""
        src = self.resolve(source, Access.WRITE, follow_links=False)
        dst = self.resolve(destination, Access.WRITE, follow_links=False)
        self._refuse_roots(src, "moved")
        self._transfer(src, dst, overwrite, moving=True)

    def copy(self, source: PathArg, destination: PathArg, *, overwrite: bool = False) -> str:
        """Copy a file, link (as a link) or directory tree; all of it appears at once or none."""
        src = self.resolve(source, Access.READ, follow_links=False)
        dst = self.resolve(destination, Access.WRITE, follow_links=False)
        return self._transfer(src, dst, overwrite, moving=False)

    def _transfer(self, src: ResolvedPath, dst: ResolvedPath, overwrite: bool, moving: bool) -> str:
        """:meth:`rename` (``moving``) or :meth:`copy`, once the paths are resolved. Returns the source's kind."""
        self._refuse_into_itself(src, dst, "move" if moving else "copy")
        tree = self._tree(src)
        if src.path == dst.path:
            noted = NOT_WATCHED
        elif moving:
            noted = self._changing(src, dst, tree=tree, moving=True)
        else:
            noted = self._changing(dst, tree=tree, arrived=True)
        with noted, ExitStack() as stack:
            # The source's lock too: no change replaces it while it is looked at and copied.
            stack.enter_context(self.guard.changing(src.path, dst.path))
            stack.callback(self.guard.moved, *((src.path, dst.path) if moving else (dst.path,)))
            # Under the locks: a protected tree moved onto the source meanwhile is seen.
            self._keep_protected(src, dst, "moving" if moving else "copying")
            with _mapped(src):
                s = stack.enter_context(self.confinement.at(src))
                st = dirfd.lstat(s.fd, s.name)
            kind = kind_of(st.st_mode)
            if not moving and kind == "file" and st.st_size > self.max_file_bytes:
                raise ToolError(ErrorCode.FILE_TOO_LARGE, f"{src} is larger than the {self.max_file_bytes:,}-byte limit")
            if src.path == dst.path:
                if moving:
                    return kind
                raise ToolError(ErrorCode.INVALID_PARAMS, "source and destination are the same path")
            created = stack.enter_context(self._parents_undone_on_failure(True))
            with _mapped(dst):
                d = stack.enter_context(self.confinement.at(dst, created))
                old = dirfd.lstat_or_none(d.fd, d.name)
            if old is not None:
                if not overwrite:
                    raise ToolError(ErrorCode.ALREADY_EXISTS, f"{dst} already exists; pass overwrite: true to replace it")
                self._refuse_roots(dst, "replaced")
                if stat_mod.S_ISDIR(old.st_mode) != stat_mod.S_ISDIR(st.st_mode):
                    what, new = ("a directory", "file") if stat_mod.S_ISDIR(old.st_mode) else ("a file", "directory")
                    raise ToolError(ErrorCode.ALREADY_EXISTS, f"{dst} is {what}; a {new} cannot replace it. Delete it first")
            with _mapped(dst):
                if not moving:
                    self._copy_into_place(s, d, overwrite, src, tree)
                    return kind
                try:
                    os.rename(s.name, d.name, src_dir_fd=s.fd, dst_dir_fd=d.fd)
                except OSError as exc:
                    if exc.errno != errno.EXDEV:
                        raise
                    self._copy_into_place(s, d, overwrite, src, tree, moving=True)
                    dirfd.fsync_dir(s.fd)
                dirfd.fsync_dir(d.fd)
        return kind

    def _copy_into_place(self, s: Place, d: Place, overwrite: bool, src: ResolvedPath, tree: bool, moving: bool = False) -> None:
        """Copy ``s`` to a temporary name beside ``d``, then rename it into place.

        ``moving``: a move across file systems: the source then leaves its name in one rename and
        is deleted. Each step is in the ledger first, so that a start after a crash finishes a
        move whose copy was in place and removes the copy of one that was not."""
        staging = temp_name(d.name)
        with temporaries.temporary(d.fd, staging) as noted, ExitStack() as move:
            try:
                try:
                    dirfd.copy_node(s.fd, s.name, d.fd, staging, self.call.check_cancelled)
                except OSError as exc:
                    if exc.errno != errno.ENXIO:
                        raise
                    # The source's entry that is no file is named, not the destination.
                    raise os_error(exc, s.path.path / exc.filename if exc.filename else s.path) from None
                copied = dirfd.lstat(d.fd, staging)
                temporaries.LEDGER.made(noted, d.fd, staging)
                if stat_mod.S_ISDIR(copied.st_mode):
                    # What arrives is the copy: it is what is looked at, so that nothing that
                    # reached the source's tree after the first look leaves protection with it.
                    self._keep_protected(src, d.path, "moving" if moving else "copying", dirfd.tree_below(d.fd, staging))
                if not tree and stat_mod.S_ISDIR(copied.st_mode):
                    # Announced as a file, a tree now: it did not wait for the programs running.
                    raise ToolError(ErrorCode.EDIT_CONFLICT, f"{src} became a directory while being copied; nothing was changed: run it again")
                if moving:
                    move.callback(temporaries.LEDGER.done, temporaries.move(s.fd, s.name, d.fd, d.name, noted))
                old = dirfd.lstat_or_none(d.fd, d.name)
                if old is not None and not overwrite:
                    raise FileExistsError(errno.EEXIST, "exists", d.name)
                if old is not None and stat_mod.S_ISDIR(old.st_mode):
                    # rename() cannot replace a directory that has contents: set the old one aside.
                    backup = temp_name(d.name)
                    with temporaries.aside(d.fd, d.name, backup, restore=True):
                        try:
                            os.rename(staging, d.name, src_dir_fd=d.fd, dst_dir_fd=d.fd)
                        except BaseException:
                            os.rename(backup, d.name, src_dir_fd=d.fd, dst_dir_fd=d.fd)
                            raise
                        dirfd.remove_quietly(d.fd, backup)
                else:
                    os.replace(staging, d.name, src_dir_fd=d.fd, dst_dir_fd=d.fd)
            except BaseException:
                dirfd.remove_quietly(d.fd, staging)
                raise
            if moving:
                # The copy is in place: the source leaves its name in one rename, then is deleted.
                dirfd.fsync_dir(d.fd)
                gone = temp_name(s.name)
                with temporaries.aside(s.fd, s.name, gone, restore=False):
                    dirfd.fsync_dir(s.fd)
                    dirfd.remove_node(s.fd, gone)

    def _refuse_roots(self, p: ResolvedPath, verb: str) -> None:
        if p.is_root:
            raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} is an allowed root; a root is never {verb}")
        for root in self.roots.roots:
            if root.path.is_relative_to(p.path):
                raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} contains the allowed root {root.path}; it cannot be {verb}")

    def _keep_protected(self, src: ResolvedPath, dst: ResolvedPath, verb: str, arriving: Iterable[str] | None = None) -> None:
        """Refuse when a protected path in the tree at ``src`` would arrive at a name nothing protects.

        The veto sees one path at a time: a directory moved or copied as a whole could take a
        protected file inside it (.aws/credentials) to a name nothing protects (aws/credentials).
        Asked under the call's locks; ``arriving``: the relative paths of what is about to be
        put in place (a copy made of the tree), else the tree at ``src`` as it is now."""
        root = self.roots.operator_root(src.path)
        if root is None or not self.policy.protected(root):
            return
        if arriving is None:
            if self.kind(src, follow_links=False) != "directory":
                return
            arriving = (rel for rel, _, _ in self.walk(str(src.path)))
        for rel in arriving:
            if self.policy.is_protected(src.path / rel) and not self.policy.is_protected(dst.path / rel):
                raise ToolError(
                    ErrorCode.ACCESS_DENIED,
                    f"{verb} {src} to {dst} is refused: it holds {shown(str(src.path / rel))}, which is protected by the secrets "
                    f"policy and would not be at {shown(str(dst.path / rel))}; move or copy the rest without it",
                )

    @staticmethod
    def _refuse_into_itself(src: ResolvedPath, dst: ResolvedPath, verb: str) -> None:
        if dst.path != src.path and dst.path.is_relative_to(src.path):
            raise ToolError(ErrorCode.INVALID_PARAMS, f"cannot {verb} {src} into itself ({dst})")


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lstat(dir_fd: int, name: str, follow: bool) -> os.stat_result:
    st = dirfd.lstat(dir_fd, name)
    if follow and stat_mod.S_ISLNK(st.st_mode):
        raise _LinkHere
    return st


def _open_regular(p: ResolvedPath, dir_fd: int, name: str, flags: int) -> tuple[int, os.stat_result]:
    """Open a regular file: never through a link, never blocking on a pipe. With its status as it was opened."""
    try:
        fd = os.open(name, flags | dirfd.READ, 0o666, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP and p.follows_links:
            raise _LinkHere from None
        raise
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if stat_mod.S_ISDIR(mode):
            raise ToolError(ErrorCode.NOT_FILE, f"{p} is a directory, not a file; use list_directory or directory_tree")
        if not stat_mod.S_ISREG(mode):
            raise ToolError(ErrorCode.NOT_FILE, f"{p} is a device, socket or pipe, not a regular file")
        os.set_blocking(fd, True)
        return fd, st
    except BaseException:
        os.close(fd)
        raise


def _open_for_append(p: ResolvedPath, dir_fd: int, name: str, create: bool) -> tuple[int, os.stat_result, bool]:
    """The file opened to append, its status, and whether this call created it (so a failure removes it)."""
    flags = os.O_WRONLY | os.O_APPEND
    if create:
        try:
            return *_open_regular(p, dir_fd, name, flags | os.O_CREAT | os.O_EXCL), True
        except FileExistsError:
            pass
    return *_open_regular(p, dir_fd, name, flags), False


def _commit(dir_fd: int, tmp: str, name: str, overwrite: bool) -> None:
    try:
        if overwrite:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            # link() fails if the name exists, so a file created meanwhile is never replaced.
            os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.unlink(tmp, dir_fd=dir_fd)
    except BaseException:
        dirfd.unlink_quietly(dir_fd, tmp)
        raise
    dirfd.fsync_dir(dir_fd)


# -- small files read whole --------------------------------------------------------------

# A small file read whole as it is opened.
# 
# Most files a tool reads are small, and a small one is read once and then searched, sniffed and
# taken from memory: one ``pread`` costs less than making a buffered reader to read it through.

SMALL_FILE = 64 * 1024
"""Bytes up to which an opened file comes read whole."""


class InMemoryFile(io.BytesIO):
    """The bytes a file held when it was opened, with its descriptor, which :meth:`close` closes.

    ``fileno()`` is the open file's own descriptor, at offset 0 (the read did not move it), so a
    tool that reads or ``fstat``s through it sees the file as with any opened file.
    """

    def __init__(self, data: bytes, fd: int):
        super().__init__(data)
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()


def read_small(fd: int, size: int) -> InMemoryFile | None:
    """The file open at ``fd``, of ``size`` bytes when its status was taken, read whole; None when
    it is larger than :data:`SMALL_FILE`, or has grown since (it is then read as a large one)."""
    if size > SMALL_FILE:
        return None
    data = os.pread(fd, size + 1, 0)
    if len(data) > size:
        return None
    return InMemoryFile(data, fd)
