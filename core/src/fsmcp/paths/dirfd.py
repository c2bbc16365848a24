"""Descriptor-relative building blocks: open, copy and remove below a directory descriptor.

Nothing here passes a path with more than one component to the kernel, and nothing is opened
without ``O_NOFOLLOW``: whatever a name turns out to be when it is used, a symbolic link is
never crossed.
"""

from __future__ import annotations

import errno
import functools
import os
import stat as stat_mod
import struct
import threading
from collections.abc import Callable, Iterator


_CLOEXEC = os.O_CLOEXEC
NOFOLLOW = os.O_NOFOLLOW
SEARCH = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | NOFOLLOW | _CLOEXEC
"""To pass through a directory: O_PATH where there is one (needs search permission only)."""
LIST = os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW | _CLOEXEC
"""To list, fsync or fchmod a directory."""
READ = os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW | _CLOEXEC
"""To read a file: O_NONBLOCK so that a FIFO swapped in cannot stall the open."""
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | _CLOEXEC


def lstat(dir_fd: int, name: str) -> os.stat_result:
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)


def is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat_mod.S_ISLNK(lstat(dir_fd, name).st_mode)
    except OSError:
        return False


def readlink(dir_fd: int, name: str) -> str | None:
    """A link's target; None when ``name`` is no longer a link (swapped back, or gone)."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            return None
        raise


def lstat_or_none(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return lstat(dir_fd, name)
    except FileNotFoundError:
        return None


def lexists(dir_fd: int, name: str) -> bool:
    return lstat_or_none(dir_fd, name) is not None


def fsync_dir(dir_fd: int) -> None:
    """Make a rename or unlink in the directory durable; best effort, as file systems differ."""
    try:
        fd = os.open(".", LIST, dir_fd=dir_fd)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def remove_node(dir_fd: int, name: str) -> None:
    """Delete a file, link or whole tree, however deep: each level is opened with O_NOFOLLOW
    from the one above, so a planted link is removed, never followed.

    A loop, not recursion (no depth is too deep for Python's recursion limit); it holds one
    descriptor per level of the directory being emptied.
    """
    if not stat_mod.S_ISDIR(lstat(dir_fd, name).st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    # Each frame: a directory's descriptor, the one it was opened from, its name there, and
    # its subdirectories still to empty (its other entries are unlinked when it is opened).
    stack: list[tuple[int, int, str, list[str]]] = []
    try:
        stack.append(_emptied(dir_fd, name))
        while stack:
            fd, parent, here, below = stack[-1]
            if below:
                stack.append(_emptied(fd, below.pop()))
                continue
            stack.pop()
            os.close(fd)
            os.rmdir(here, dir_fd=parent)
    finally:
        for fd, _, _, _ in stack:
            os.close(fd)


def _emptied(parent: int, name: str) -> tuple[int, int, str, list[str]]:
    fd = os.open(name, LIST, dir_fd=parent)
    try:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        below = [n for n, is_dir in entries if is_dir]
        for n, is_dir in entries:
            if not is_dir:
                os.unlink(n, dir_fd=fd)
    except BaseException:
        os.close(fd)
        raise
    return fd, parent, name, below


def remove_tree_quietly(path: str) -> None:
    """Delete the server's own directory ``path`` (outside the roots), however deep, ignoring failures."""
    head, name = os.path.split(os.path.abspath(path))
    try:
        fd = os.open(head, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except OSError:
        return
    try:
        remove_quietly(fd, name)
    finally:
        os.close(fd)


def remove_quietly(dir_fd: int, name: str) -> None:
    try:
        remove_node(dir_fd, name)
    except OSError:
        pass


def remove_tree(dir_fd: int, name: str) -> None:
    """Remove a file or tree, read-only directories in it too (saved copies keep their modes)."""
    try:
        remove_node(dir_fd, name)
    except PermissionError:
        _open_up(dir_fd, name)
        remove_quietly(dir_fd, name)


def _open_up(dir_fd: int, name: str) -> None:
    """Make ``name`` and every directory below it ``rwx`` for the owner: a loop holding one
    descriptor a level, not recursion (a tree of any depth)."""
    stack: list[tuple[int, Iterator[str]]] = []

    def enter(parent: int, child: str) -> None:
        try:
            if not stat_mod.S_ISDIR(lstat(parent, child).st_mode):
                return
            chmod_at(parent, child, 0o700)
            fd = os.open(child, LIST, dir_fd=parent)
        except OSError:
            return
        try:
            with os.scandir(fd) as it:
                names = [e.name for e in it]
        except BaseException:
            os.close(fd)
            raise
        stack.append((fd, iter(names)))

    enter(dir_fd, name)
    try:
        while stack:
            fd, names = stack[-1]
            child = next(names, None)
            if child is None:
                stack.pop()
                os.close(fd)
            else:
                enter(fd, child)
    finally:
        for fd, _ in stack:
            os.close(fd)


def chmod_at(dir_fd: int, name: str, mode: int) -> bool:
    """Set the mode of what ``name`` is; False, changing nothing, when it is a symbolic link."""
    if os.chmod in os.supports_follow_symlinks:
        # fchmodat(AT_SYMLINK_NOFOLLOW): a link swapped in after the check gets the mode, not its target.
        if is_link(dir_fd, name):
            return False
        os.chmod(name, mode, dir_fd=dir_fd, follow_symlinks=False)
        return True
    fd = os.open(name, os.O_PATH | NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    try:
        if stat_mod.S_ISLNK(os.fstat(fd).st_mode):
            return False
        # Linux has no lchmod: /proc's magic link names exactly the inode just opened.
        os.chmod(f"/proc/self/fd/{fd}", mode)
        return True
    finally:
        os.close(fd)


def _runs_to_the_end() -> None:
    pass


def copy_node(src_fd: int, src: str, dst_fd: int, dst: str, check_cancelled: Callable[[], None] = _runs_to_the_end, *, link_files: bool = False) -> None:
    """Copy a file, link (as a link) or tree to a new name, keeping modes and times.

    ``link_files``: a regular file is a hard link to the source's where the file system allows
    (else copied), for a caller whose source is about to be removed whole: nothing writes it
    in place meanwhile, and a link costs no bytes (the journal's copy of a tree an undo removes).

    Devices, sockets and pipes are refused (``ENXIO``, whose ``filename`` is the entry's path
    below ``src``, empty for ``src`` itself): the copy would block or be meaningless.
    A tree is copied by a loop, not recursion, however deep it is. On failure the caller
    removes the partial copy. ``check_cancelled`` is the call's, called between files and chunks;
    without one the copy runs to its end (a restore, the journal's copies).
    """
    st = lstat(src_fd, src)
    if not stat_mod.S_ISDIR(st.st_mode):
        _copy_leaf(src_fd, src, dst_fd, dst, st, check_cancelled, "", link_files)
        return
    os.mkdir(dst, 0o700, dir_fd=dst_fd)
    # Each frame: the source and copy directories' descriptors, the names left to copy, and
    # the source's stat (its mode and times are set on the copy once it is full); ``below``,
    # each frame's path below ``src``.
    stack: list[tuple[int, int, list[str], os.stat_result]] = []
    below = [""]
    try:
        stack.append(_copy_frame(src_fd, src, dst_fd, dst, st))
        while stack:
            s, d, names, dir_st = stack[-1]
            if not names:
                stack.pop()
                below.pop()
                _close_frame(s, d, dir_st)
                continue
            check_cancelled()
            name = names.pop()
            entry = lstat(s, name)
            if stat_mod.S_ISDIR(entry.st_mode):
                os.mkdir(name, 0o700, dir_fd=d)
                stack.append(_copy_frame(s, name, d, name, entry))
                below.append(os.path.join(below[-1], name))
            else:
                _copy_leaf(s, name, d, name, entry, check_cancelled, os.path.join(below[-1], name), link_files)
    finally:
        for s, d, _, _ in stack:
            os.close(s)
            os.close(d)


def _copy_frame(src_fd: int, src: str, dst_fd: int, dst: str, st: os.stat_result) -> tuple[int, int, list[str], os.stat_result]:
    s = os.open(src, LIST, dir_fd=src_fd)
    try:
        _same_or_raise(st, os.fstat(s), src)
        d = os.open(dst, LIST, dir_fd=dst_fd)
    except BaseException:
        os.close(s)
        raise
    try:
        with os.scandir(s) as it:
            names = sorted((e.name for e in it), reverse=True)
    except BaseException:
        os.close(s)
        os.close(d)
        raise
    return s, d, names, st


def _close_frame(s: int, d: int, st: os.stat_result) -> None:
    try:
        os.fchmod(d, stat_mod.S_IMODE(st.st_mode))
        os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        os.close(s)
        os.close(d)


def _copy_leaf(src_fd: int, src: str, dst_fd: int, dst: str, st: os.stat_result, check_cancelled: Callable[[], None], below: str, link: bool = False) -> None:
    if stat_mod.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src, dir_fd=src_fd), dst, dir_fd=dst_fd)
    elif not stat_mod.S_ISREG(st.st_mode):
        raise OSError(errno.ENXIO, "a device, socket or pipe cannot be copied", below)
    elif not (link and _linked(src_fd, src, dst_fd, dst)):
        _copy_file(src_fd, src, dst_fd, dst, check_cancelled, below)


def _linked(src_fd: int, src: str, dst_fd: int, dst: str) -> bool:
    try:
        os.link(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
            raise
        return False  # another file system, another's file under protected_hardlinks, too many links: copied
    return True


def _copy_file(src_fd: int, src: str, dst_fd: int, dst: str, check_cancelled: Callable[[], None], below: str) -> None:
    s = os.open(src, READ, dir_fd=src_fd)
    try:
        st = os.fstat(s)
        if not stat_mod.S_ISREG(st.st_mode):
            raise OSError(errno.ENXIO, "a device, socket or pipe cannot be copied", below)
        os.set_blocking(s, True)
        d = os.open(dst, CREATE, 0o600, dir_fd=dst_fd)
        try:
            _copy_bytes(s, d, check_cancelled)
            os.fchmod(d, stat_mod.S_IMODE(st.st_mode))
            os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(d)
    finally:
        os.close(s)


def _copy_bytes(src: int, dst: int, check_cancelled: Callable[[], None]) -> None:
    try:
        # In the kernel, without a trip through Python's buffers.
        while os.sendfile(dst, src, None, 1 << 26):
            check_cancelled()
        return
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP):
            raise
    while chunk := os.read(src, 1 << 20):
        check_cancelled()
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view):]


def _same_or_raise(before: os.stat_result, now: os.stat_result, name: str) -> None:
    if (before.st_dev, before.st_ino) != (now.st_dev, now.st_ino):
        raise OSError(errno.EAGAIN, "changed while being copied; try again", name)


class DirChain:
    """Directories below ``top`` opened by relative path, each from the one above it.

    A walk asks for directories in an order where consecutive ones share most of their path,
    so the open ancestors are reused: a tree costs about one ``openat`` per directory. At most
    ``limit`` descriptors are held however deep the tree; an evicted level is opened again
    from ``top`` when the walk comes back to it.
    """

    def __init__(self, top: int, limit: int = 64):
        self._top = top
        self._limit = limit
        self._names: list[str] = []
        self._fds: list[int | None] = []

    def open(self, parts: tuple[str, ...]) -> int:
        """The descriptor of ``top/parts``, valid until the next ``open`` or ``close``; OSError if unreachable."""
        keep = 0
        while keep < min(len(parts), len(self._names)) and parts[keep] == self._names[keep]:
            keep += 1
        self._truncate(keep)
        for name in parts[keep:]:
            fd = os.open(name, LIST, dir_fd=self._base())
            self._names.append(name)
            self._fds.append(fd)
            self._evict()
        return self._base()

    def _base(self) -> int:
        if not self._fds:
            return self._top
        if self._fds[-1] is None:
            fd, owned = self._top, False
            for name in self._names:
                nxt = os.open(name, LIST, dir_fd=fd)
                if owned:
                    os.close(fd)
                fd, owned = nxt, True
            self._fds[-1] = fd
            self._evict()
        return self._fds[-1]  # type: ignore[return-value]

    def _evict(self) -> None:
        held = [i for i, fd in enumerate(self._fds) if fd is not None]
        for i in held[: max(0, len(held) - self._limit)]:
            os.close(self._fds[i])  # type: ignore[arg-type]
            self._fds[i] = None

    def _truncate(self, keep: int) -> None:
        for fd in self._fds[keep:]:
            if fd is not None:
                os.close(fd)
        del self._names[keep:], self._fds[keep:]

    def close(self) -> None:
        self._truncate(0)


def tree_below(dir_fd: int, name: str) -> Iterator[str]:
    """The relative path of everything under the directory ``name`` in ``dir_fd`` (links not
    followed). A loop over a chain of descriptors, not recursion: a tree of any depth."""
    top = os.open(name, LIST, dir_fd=dir_fd)
    chain = DirChain(top)
    try:
        pending: list[tuple[str, ...]] = [()]
        while pending:
            parts = pending.pop()
            with os.scandir(chain.open(parts)) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            below = []
            for entry, is_dir in entries:
                yield "/".join((*parts, entry))
                if is_dir:
                    below.append((*parts, entry))
            pending.extend(reversed(below))
    finally:
        chain.close()
        os.close(top)


# -- a file's birth time ---------------------------------------------------------------------
#
# os.stat does not give it on Linux: statx(2) through the C library, loaded (ctypes) by the
# first call that asks, not at every start.

_STATX_BTIME = 0x800
_AT_SYMLINK_NOFOLLOW = 0x100
_BTIME_OFFSET = 80  # struct statx: stx_btime follows 64 bytes of fields and stx_atime
_U32 = struct.Struct("<I")
_BTIME = struct.Struct("<qI")
_local = threading.local()


@functools.cache
def _statx() -> tuple[Callable[..., int], Callable[[int], bytearray]] | None:
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.statx
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function, ctypes.create_string_buffer


def birth_ns(dir_fd: int, name: str) -> int | None:
    """When ``name`` in ``dir_fd`` was made (links not followed), in ns; None where unknown."""
    found = _statx()
    if found is None:
        return None
    statx, make_buffer = found
    # One buffer per thread, read in place: every temporary file of a write asks (temporaries.py).
    buf = getattr(_local, "buf", None)
    if buf is None:
        buf = _local.buf = make_buffer(256)
    if statx(dir_fd, name.encode("utf-8", "surrogateescape"), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:
        return None
    if not _U32.unpack_from(buf, 0)[0] & _STATX_BTIME:
        return None  # the file system keeps no birth time
    seconds, nanos = _BTIME.unpack_from(buf, _BTIME_OFFSET)
    return seconds * 1_000_000_000 + nanos
