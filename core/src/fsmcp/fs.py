"""The file-system primitives every tool uses. Plugins never open, list or stat a path by name.

Every primitive takes a raw path string (resolved here with the access it needs) or a
:class:`ResolvedPath` the host made earlier, so the path policy runs for every operation and
confinement can be tightened in this one module without touching a plugin.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat as stat_mod
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .errors import ErrorCode, ToolError
from .roots import Access, ResolvedPath, RootSet

PathArg = str | ResolvedPath
Resolver = Callable[[str, Access, bool], ResolvedPath]

_UMASK = os.umask(0)
os.umask(_UMASK)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TEMP_MARK = ".fsmcp-tmp"


@dataclass(frozen=True)
class Entry:
    """One directory entry, described without following links out of the roots.

    ``kind`` is ``file``, ``directory``, ``symlink`` or ``other``. For a symlink,
    ``target_kind`` is the kind of what it points to when that lies inside the roots, else
    None; ``size`` is the file's size for files, else None.
    """

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
    where = str(path if path is not None else (exc.filename or "the path"))
    code, advice = _ERRNO_CODES.get(exc.errno or 0, (ErrorCode.INTERNAL_ERROR, f"failed: {exc.strerror or exc}"))
    return ToolError(code, f"{where} {advice}", {"errno": exc.errno})


@contextmanager
def _mapped(path: object):
    try:
        yield
    except ToolError:
        raise
    except OSError as exc:
        raise os_error(exc, path) from None


def kind_of(mode: int) -> str:
    """``file``, ``directory``, ``symlink`` or ``other``, for an ``st_mode``."""
    if stat_mod.S_ISLNK(mode):
        return "symlink"
    if stat_mod.S_ISDIR(mode):
        return "directory"
    if stat_mod.S_ISREG(mode):
        return "file"
    return "other"


class FileSystem:
    """The host's primitives, bound to the path policy."""

    def __init__(self, resolver: Resolver, roots: RootSet, max_file_bytes: int):
        self._resolver = resolver
        self.roots = roots
        self.max_file_bytes = max_file_bytes

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, path: PathArg, access: Access = Access.READ, *, follow_links: bool = True) -> ResolvedPath:
        """Apply the path policy; raises ACCESS_DENIED or READ_ONLY as a ToolError."""
        if isinstance(path, ResolvedPath):
            if (path.access is Access.WRITE or access is Access.READ) and path.follows_links == follow_links:
                return path
            path = str(path.path)
        return self._resolver(path, access, follow_links)

    def _is_inside(self, real: Path) -> bool:
        return self.roots.containing(real) is not None

    # -- metadata -----------------------------------------------------------------------------

    def stat(self, path: PathArg, *, follow_links: bool = True) -> os.stat_result:
        p = self.resolve(path, Access.READ, follow_links=follow_links)
        with _mapped(p):
            return os.stat(p.path, follow_symlinks=follow_links)

    def kind(self, path: PathArg, *, follow_links: bool = True) -> str | None:
        """``file``, ``directory``, ``symlink``, ``other``, or None when nothing is there."""
        p = self.resolve(path, Access.READ, follow_links=follow_links)
        try:
            return kind_of(os.stat(p.path, follow_symlinks=follow_links).st_mode)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise os_error(exc, p) from None

    def readlink(self, path: PathArg) -> str | None:
        """The link's target as written, or None when the target lies outside the roots."""
        p = self.resolve(path, Access.READ, follow_links=False)
        with _mapped(p):
            target = os.readlink(p.path)
        real = Path(os.path.realpath(p.path))
        return target if self._is_inside(real) else None

    # -- reading ------------------------------------------------------------------------------

    def open_read(self, path: PathArg) -> BinaryIO:
        """A regular file opened for binary reading. The caller closes it."""
        p = self.resolve(path, Access.READ)
        with _mapped(p):
            # O_NOFOLLOW: a symlink swapped in after the check is refused, not followed.
            fd = _open_regular(p, os.O_RDONLY)
            return os.fdopen(fd, "rb")

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
        p = self.resolve(path, Access.READ)
        with _mapped(p):
            if not stat_mod.S_ISDIR(os.stat(p.path).st_mode):
                raise ToolError(ErrorCode.NOT_DIRECTORY, f"{p} is a file, not a directory; use read_file or get_file_info")
            with os.scandir(p.path) as it:
                entries = [self._entry(e) for e in it]
        entries.sort(key=lambda e: e.name)
        return entries

    def _entry(self, d: os.DirEntry) -> Entry:
        path = Path(d.path)
        try:
            st = d.stat(follow_symlinks=False)
        except OSError:
            return Entry(d.name, "other", None, path)
        kind = kind_of(st.st_mode)
        if kind == "file":
            return Entry(d.name, kind, st.st_size, path)
        if kind != "symlink":
            return Entry(d.name, kind, None, path)
        # A link's target is described only when it lies inside the roots.
        real = Path(os.path.realpath(path))
        if not self._is_inside(real):
            return Entry(d.name, kind, None, path)
        try:
            target = os.readlink(path)
            target_kind = kind_of(os.stat(real).st_mode)
        except OSError:
            return Entry(d.name, kind, None, path, None, None)
        return Entry(d.name, kind, None, path, target_kind, target)

    def walk(
        self,
        path: PathArg,
        *,
        max_depth: int | None = None,
        prune: Callable[[str, Entry], bool] | None = None,
        breadth_first: bool = False,
    ) -> Iterator[tuple[str, int, Entry]]:
        """Yield ``(relative path, depth, entry)`` for everything below ``path``.

        Depth 1 is the directory's own entries; ``max_depth`` stops descending past it.
        Symlinked directories are reported, never entered; ``prune(rel, entry)`` returning
        True drops an entry and, for a directory, everything under it. Unreadable
        directories are skipped.
        """
        top = self.resolve(path, Access.READ)
        with _mapped(top):
            if not stat_mod.S_ISDIR(os.stat(top.path).st_mode):
                raise ToolError(ErrorCode.NOT_DIRECTORY, f"{top} is a file, not a directory")
        pending: deque[tuple[Path, str, int]] = deque([(top.path, "", 1)])
        while pending:
            directory, rel_dir, depth = pending.popleft() if breadth_first else pending.pop()
            try:
                with os.scandir(directory) as it:
                    entries = sorted((self._entry(e) for e in it), key=lambda e: e.name)
            except OSError:
                continue
            below = []
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if prune is not None and prune(rel, entry):
                    continue
                yield rel, depth, entry
                if entry.kind == "directory" and (max_depth is None or depth < max_depth):
                    below.append((entry.path, rel, depth + 1))
            pending.extend(below if breadth_first else reversed(below))

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
        """Replace or create a file all at once: temp file beside it, fsync, rename.

        ``data`` is bytes or an iterable of byte chunks (streamed, for large content). The
        file's mode (and owner, where permitted) is kept, or set to ``mode`` when given.
        Returns True when the file was created. Readers see the old content or the new,
        never a mix; a failure leaves the old file byte for byte as it was.
        """
        p = self.resolve(path, Access.WRITE)
        if isinstance(data, (bytes, bytearray, memoryview)):
            self._check_size(len(data))
            data = [bytes(data)]
        target = p.path
        with _mapped(p):
            try:
                old = os.stat(target)
            except FileNotFoundError:
                old = None
            if old is not None:
                if stat_mod.S_ISDIR(old.st_mode):
                    raise ToolError(ErrorCode.NOT_FILE, f"{p} is a directory; choose a file path")
                if not stat_mod.S_ISREG(old.st_mode):
                    raise ToolError(ErrorCode.NOT_FILE, f"{p} is a device, socket or pipe, not a regular file; it is not replaced")
                if not overwrite:
                    raise ToolError(ErrorCode.ALREADY_EXISTS, f"{p} already exists; pass overwrite: true to replace it")
            if mode is None:
                mode = stat_mod.S_IMODE(old.st_mode) if old else 0o666 & ~_UMASK
            with self._parents_undone_on_failure(p, make_parents):
                tmp = self._write_temp(target.parent, target.name, data, mode, old)
                self._commit(tmp, target, overwrite)
        return old is None

    def _check_size(self, size: int) -> None:
        if size > self.max_file_bytes:
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{size:,} bytes is over the {self.max_file_bytes:,}-byte write limit (max_file_bytes); nothing was written",
            )

    def _write_temp(self, directory: Path, name: str, chunks: Iterable[bytes], mode: int, old: os.stat_result | None) -> Path:
        tmp = directory / f".{name}.{secrets.token_hex(6)}{_TEMP_MARK}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
        try:
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
            _unlink_quietly(tmp)
            raise
        os.close(fd)
        return tmp

    def _commit(self, tmp: Path, target: Path, overwrite: bool) -> None:
        try:
            if overwrite:
                os.replace(tmp, target)
            else:
                # link() fails if the name exists, so a file created meanwhile is never replaced.
                os.link(tmp, target)
                os.unlink(tmp)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        _fsync_dir(target.parent)

    def _make_parents(self, p: ResolvedPath) -> list[Path]:
        parent = p.path.parent
        if parent.is_dir():
            return []
        return self._mkdirs(self.resolve(str(parent), Access.WRITE), parents=True)

    @contextmanager
    def _parents_undone_on_failure(self, p: ResolvedPath, make_parents: bool):
        # A failed write must change nothing, not even leave the directories made for it.
        created = self._make_parents(p) if make_parents else []
        try:
            yield
        except BaseException:
            for d in reversed(created):
                try:
                    os.rmdir(d)
                except OSError:
                    break
            raise

    def append(self, path: PathArg, data: bytes, *, create: bool = False) -> int:
        """Append bytes; on failure the file is cut back to its old length. Returns the new size."""
        p = self.resolve(path, Access.WRITE)
        flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
        with _mapped(p), self._parents_undone_on_failure(p, create):
            existed = os.path.lexists(p.path)
            fd = _open_regular(p, flags)
            try:
                st = os.fstat(fd)
                if st.st_size + len(data) > self.max_file_bytes:
                    raise ToolError(ErrorCode.FILE_TOO_LARGE, f"appending would make {p} larger than the {self.max_file_bytes:,}-byte limit")
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                except BaseException:
                    os.ftruncate(fd, st.st_size)
                    if not existed:
                        _unlink_quietly(p.path)
                    raise
                return st.st_size + len(data)
            finally:
                os.close(fd)

    def mkdir(self, path: PathArg, *, parents: bool = True) -> bool:
        """Create a directory (and its parents); True when it did not exist before."""
        return bool(self._mkdirs(self.resolve(path, Access.WRITE), parents=parents))

    def _mkdirs(self, p: ResolvedPath, *, parents: bool) -> list[Path]:
        with _mapped(p):
            if p.path.is_dir():
                return []
            if p.path.exists() or p.path.is_symlink():
                raise ToolError(ErrorCode.NOT_DIRECTORY, f"{p} exists and is not a directory")
            missing = []
            d = p.path
            while not d.exists():
                missing.append(d)
                d = d.parent
            if missing[1:] and not parents:
                raise ToolError(ErrorCode.NOT_FOUND, f"the parent of {p} does not exist")
            created = []
            for d in reversed(missing):
                # Each level is re-checked: a link planted in a missing level must not lead out.
                self.resolve(str(d), Access.WRITE)
                try:
                    os.mkdir(d, 0o777)
                    created.append(d)
                except FileExistsError:
                    if not d.is_dir():
                        raise
            return created

    def chmod(self, path: PathArg, mode: int) -> None:
        """Set the permission bits of a file or directory (a link's target, inside the roots)."""
        p = self.resolve(path, Access.WRITE)
        with _mapped(p):
            os.chmod(p.path, stat_mod.S_IMODE(mode))

    def symlink(self, path: PathArg, target: str) -> None:
        """Create a symlink at ``path`` pointing to ``target`` (kept as written).

        The target, taken relative to the link's directory, must lie inside the roots: a link
        is never a way out. ``ACCESS_DENIED`` otherwise.
        """
        p = self.resolve(path, Access.WRITE, follow_links=False)
        if "\x00" in target or not target:
            raise ToolError(ErrorCode.INVALID_PARAMS, "a link target must be a non-empty path without NUL bytes")
        real = Path(os.path.realpath(p.path.parent / target))
        if not self._is_inside(real):
            raise ToolError(ErrorCode.ACCESS_DENIED, f"the link {p} would point to {target!r}, outside the allowed directories")
        with _mapped(p):
            self._make_parents(p)
            os.symlink(target, p.path)

    def snapshot(self, paths: Iterable[PathArg]) -> Snapshot:
        """Record the state of ``paths`` (files, links, whole trees, or their absence).

        ``Snapshot.restore()`` puts every one back as it was: contents, modes, links,
        deletions undone, creations (with the directories made for them) removed. The copies
        live outside the roots, in the host's own temporary directory, until ``discard()``.
        """
        snap = Snapshot()
        try:
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
        with _mapped(p):
            kind = kind_of(os.lstat(p.path).st_mode)
            if kind != "directory":
                os.unlink(p.path)
            elif recursive:
                # rmtree's fd-based walk never follows a link planted inside the tree.
                shutil.rmtree(p.path)
            else:
                os.rmdir(p.path)
            _fsync_dir(p.path.parent)
        return kind

    def rename(self, source: PathArg, destination: PathArg, *, overwrite: bool = False) -> None:
        """Move a file, link or directory; a link moves as a link. Works across devices."""
        src = self.resolve(source, Access.WRITE, follow_links=False)
        dst = self.resolve(destination, Access.WRITE, follow_links=False)
        self._refuse_roots(src, "moved")
        self._refuse_into_itself(src, dst, "move")
        with _mapped(src):
            os.lstat(src.path)
        if src.path == dst.path:
            return
        self._clear_destination(src, dst, overwrite)
        with _mapped(dst):
            self._make_parents(dst)
            try:
                os.rename(src.path, dst.path)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                self._copy_into_place(src.path, dst.path, overwrite)
                self.remove(src, recursive=True)
            _fsync_dir(dst.path.parent)

    def copy(self, source: PathArg, destination: PathArg, *, overwrite: bool = False) -> str:
        """Copy a file, link (as a link) or directory tree; all of it appears at once or none."""
        src = self.resolve(source, Access.READ, follow_links=False)
        dst = self.resolve(destination, Access.WRITE, follow_links=False)
        self._refuse_into_itself(src, dst, "copy")
        with _mapped(src):
            kind = kind_of(os.lstat(src.path).st_mode)
        if kind == "file" and os.lstat(src.path).st_size > self.max_file_bytes:
            raise ToolError(ErrorCode.FILE_TOO_LARGE, f"{src} is larger than the {self.max_file_bytes:,}-byte limit")
        if src.path == dst.path:
            raise ToolError(ErrorCode.INVALID_PARAMS, "source and destination are the same path")
        self._clear_destination(src, dst, overwrite)
        with _mapped(dst):
            self._make_parents(dst)
            self._copy_into_place(src.path, dst.path, overwrite)
        return kind

    def _copy_into_place(self, src: Path, dst: Path, overwrite: bool) -> None:
        staging = dst.parent / f".{dst.name}.{secrets.token_hex(6)}{_TEMP_MARK}"
        try:
            if os.path.islink(src):
                os.symlink(os.readlink(src), staging)
            elif os.path.isdir(src):
                # symlinks=True copies links as links: nothing outside the roots is read.
                shutil.copytree(src, staging, symlinks=True)
            else:
                shutil.copy2(src, staging, follow_symlinks=False)
            if overwrite and os.path.isdir(dst) and not os.path.islink(dst):
                backup = dst.parent / f".{dst.name}.{secrets.token_hex(6)}{_TEMP_MARK}"
                os.rename(dst, backup)
                try:
                    os.rename(staging, dst)
                except BaseException:
                    os.rename(backup, dst)
                    raise
                shutil.rmtree(backup, ignore_errors=True)
            elif overwrite:
                os.replace(staging, dst)
            else:
                if os.path.lexists(dst):
                    raise FileExistsError(errno.EEXIST, "exists", str(dst))
                os.rename(staging, dst)
        except BaseException:
            if os.path.isdir(staging) and not os.path.islink(staging):
                shutil.rmtree(staging, ignore_errors=True)
            else:
                _unlink_quietly(staging)
            raise

    def _clear_destination(self, src: ResolvedPath, dst: ResolvedPath, overwrite: bool) -> None:
        try:
            dst_mode = os.lstat(dst.path).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise os_error(exc, dst) from None
        if not overwrite:
            raise ToolError(ErrorCode.ALREADY_EXISTS, f"{dst} already exists; pass overwrite: true to replace it")
        self._refuse_roots(dst, "replaced")
        src_is_dir = stat_mod.S_ISDIR(os.lstat(src.path).st_mode)
        if stat_mod.S_ISDIR(dst_mode) != src_is_dir:
            what = "a directory" if stat_mod.S_ISDIR(dst_mode) else "a file"
            raise ToolError(ErrorCode.ALREADY_EXISTS, f"{dst} is {what}; a {'directory' if src_is_dir else 'file'} cannot replace it. Delete it first")

    def _refuse_roots(self, p: ResolvedPath, verb: str) -> None:
        if p.is_root:
            raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} is an allowed root; a root is never {verb}")
        for root in self.roots.roots:
            if root.path.is_relative_to(p.path):
                raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} contains the allowed root {root.path}; it cannot be {verb}")

    @staticmethod
    def _refuse_into_itself(src: ResolvedPath, dst: ResolvedPath, verb: str) -> None:
        if dst.path != src.path and dst.path.is_relative_to(src.path):
            raise ToolError(ErrorCode.INVALID_PARAMS, f"cannot {verb} {src} into itself ({dst})")


class Snapshot:
    """What :meth:`FileSystem.snapshot` recorded; see there."""

    def __init__(self) -> None:
        self._store = Path(tempfile.mkdtemp(prefix="fsmcp-snapshot-"))
        self._saved: list[tuple[Path, Path | None, Path | None]] = []
        self._seen: set[Path] = set()

    def add(self, p: ResolvedPath) -> None:
        """Record one more path (a second record of the same path is ignored)."""
        target = p.path
        if target in self._seen:
            return
        self._seen.add(target)
        if os.path.lexists(target):
            copy = self._store / str(len(self._saved))
            with _mapped(p):
                if os.path.isdir(target) and not os.path.islink(target):
                    shutil.copytree(target, copy, symlinks=True)
                else:
                    shutil.copy2(target, copy, follow_symlinks=False)
            self._saved.append((target, copy, None))
        else:
            first_missing = target
            while not os.path.lexists(first_missing.parent):
                first_missing = first_missing.parent
            self._saved.append((target, None, first_missing))

    def restore(self) -> None:
        """Put every recorded path back, newest record first; then forget the copies."""
        for target, copy, first_missing in reversed(self._saved):
            _remove_any(first_missing or target)
            if copy is not None:
                os.makedirs(target.parent, exist_ok=True)
                if os.path.isdir(copy) and not os.path.islink(copy):
                    shutil.copytree(copy, target, symlinks=True)
                else:
                    shutil.copy2(copy, target, follow_symlinks=False)
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self._store, ignore_errors=True)
        self._saved.clear()


def _remove_any(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _open_regular(p: ResolvedPath, flags: int) -> int:
    """Open a regular file by its resolved path: never through a link, never blocking on a pipe."""
    fd = os.open(p.path, flags | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC, 0o666)
    try:
        mode = os.fstat(fd).st_mode
        if stat_mod.S_ISDIR(mode):
            raise ToolError(ErrorCode.NOT_FILE, f"{p} is a directory, not a file; use list_directory or directory_tree")
        if not stat_mod.S_ISREG(mode):
            raise ToolError(ErrorCode.NOT_FILE, f"{p} is a device, socket or pipe, not a regular file")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | _CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
