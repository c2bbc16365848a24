"""The journal's undo: fingerprints of paths inside the roots, and putting saved copies back all at once.

Everything inside the roots is reached through :class:`~fsmcp.paths.roots.Confinement` (a link on
the way that leads out of the roots is ``ACCESS_DENIED``); the saved copies are read through a
descriptor of the store they live in.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from ..api.errors import ErrorCode, ToolError
from ..paths import dirfd, temporaries
from ..paths.roots import Confinement, Created, Place, ResolvedPath
from ..paths.temporaries import temp_name

ABSENT = "absent"


def digest(conf: Confinement, p: ResolvedPath) -> str:
    """What is at ``p`` now, as a hash of kinds, modes, link targets and bytes (``absent``)."""
    try:
        with conf.at(p) as place:
            return digest_at(place.fd, place.name)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT


def digest_at(dir_fd: int, name: str) -> str:
    try:
        st = dirfd.lstat(dir_fd, name)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    h = hashlib.sha256()
    _feed(h, dir_fd, name, st)
    return h.hexdigest()


def _feed(h: hashlib._Hash, dir_fd: int, name: str, st: os.stat_result) -> None:
    # A loop over open directories, not recursion: a tree of any depth has a digest.
    if not stat_mod.S_ISDIR(st.st_mode):
        _feed_leaf(h, dir_fd, name, st)
        return
    h.update(b"d%o\0" % stat_mod.S_IMODE(st.st_mode))
    stack = [_listed(dir_fd, name)]
    try:
        while stack:
            fd, names = stack[-1]
            if not names:
                h.update(b"\0")
                stack.pop()
                os.close(fd)
                continue
            child = names.pop()
            h.update(os.fsencode(child) + b"\0")
            child_st = dirfd.lstat(fd, child)
            if stat_mod.S_ISDIR(child_st.st_mode):
                h.update(b"d%o\0" % stat_mod.S_IMODE(child_st.st_mode))
                stack.append(_listed(fd, child))
            else:
                _feed_leaf(h, fd, child, child_st)
    finally:
        for fd, _ in stack:
            os.close(fd)


def _listed(dir_fd: int, name: str) -> tuple[int, list[str]]:
    """A directory opened, with its names in reverse order (popped, they come sorted)."""
    fd = os.open(name, dirfd.LIST, dir_fd=dir_fd)
    try:
        with os.scandir(fd) as it:
            return fd, sorted((e.name for e in it), reverse=True)
    except BaseException:
        os.close(fd)
        raise


def _feed_leaf(h: hashlib._Hash, dir_fd: int, name: str, st: os.stat_result) -> None:
    mode = stat_mod.S_IMODE(st.st_mode)
    if stat_mod.S_ISLNK(st.st_mode):
        h.update(b"l" + os.fsencode(os.readlink(name, dir_fd=dir_fd)) + b"\0")
    elif stat_mod.S_ISREG(st.st_mode):
        h.update(b"f%o\0" % mode)
        fd = os.open(name, dirfd.READ, dir_fd=dir_fd)
        try:
            os.set_blocking(fd, True)
            while chunk := os.read(fd, 1 << 20):
                h.update(chunk)
        finally:
            os.close(fd)
        h.update(b"\0")
    else:
        h.update(b"o%o\0" % mode)


def tree_bytes(dir_fd: int, name: str) -> int:
    """The bytes of the files at ``name`` (a file, or every file of a tree), links never followed."""
    st = dirfd.lstat(dir_fd, name)
    if not stat_mod.S_ISDIR(st.st_mode):
        return st.st_size if stat_mod.S_ISREG(st.st_mode) else 0
    total = 0
    stack = [_listed(dir_fd, name)]
    try:
        while stack:
            fd, names = stack[-1]
            if not names:
                stack.pop()
                os.close(fd)
                continue
            child = names.pop()
            child_st = dirfd.lstat(fd, child)
            if stat_mod.S_ISDIR(child_st.st_mode):
                stack.append(_listed(fd, child))
            elif stat_mod.S_ISREG(child_st.st_mode):
                total += child_st.st_size
    finally:
        for fd, _ in stack:
            os.close(fd)
    return total


def put_back(conf: Confinement, store: int, items: list[tuple[ResolvedPath, str | None]]) -> None:
    """Make each path its saved copy (a name in ``store``), or absent for None; all or none.

    Every copy is staged beside its path first; only then are the paths swapped, each by
    renames. A failure on the way puts back what was swapped and removes what was staged.
    A path reached through a link (one swapped in on the way since the policy's answer) is
    ``ACCESS_DENIED``: a copy goes back to the place it was taken from, or nowhere.
    """
    # The ledger's notes end last (exited first, last): after a crash anywhere in here, the next
    # start removes what was staged and puts back what was set aside where nothing took its place.
    # Never handed the call's cancellation: a restore stopped half-way would leave a mix.
    with ExitStack() as noted, _staged(conf, store, items, noted) as staged:
        swapped: list[tuple[ResolvedPath, str | None, bool]] = []
        try:
            for p, tmp in staged:
                with _reached(conf, p) as place:
                    if place is None:
                        continue  # an absence whose directory is gone too: nothing to remove
                    _same(place, p)
                    backup = None
                    if dirfd.lexists(place.fd, place.name):
                        backup = temp_name(place.name)
                        noted.callback(temporaries.LEDGER.done, temporaries.set_aside(place.fd, place.name, backup, restore=True))
                    swapped.append((p, backup, False))
                    if tmp is not None:
                        os.rename(tmp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
                        swapped[-1] = (p, backup, True)
                    dirfd.fsync_dir(place.fd)
        except BaseException:
            for p, backup, placed in reversed(swapped):
                with _reached(conf, p) as place:
                    if place is None:
                        continue
                    if placed:
                        dirfd.remove_quietly(place.fd, place.name)
                    if backup is not None:
                        os.rename(backup, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
            raise
        for p, backup, _ in swapped:
            if backup is not None:
                with _reached(conf, p) as place:
                    if place is not None:
                        # Renamed, noted as being deleted, before its removal (not atomic for a tree)
                        # starts: killed midway, the next start finishes it, never puts a part back.
                        doomed = temp_name(place.name)
                        with temporaries.aside(place.fd, backup, doomed, restore=False):
                            dirfd.remove_tree(place.fd, doomed)


@contextmanager
def _staged(
    conf: Confinement, store: int, items: list[tuple[ResolvedPath, str | None]], noted: ExitStack
) -> Iterator[list[tuple[ResolvedPath, str | None]]]:
    staged: list[tuple[ResolvedPath, str | None]] = []
    created: Created = []
    ok = False
    try:
        for p, copy in items:
            if copy is None:
                staged.append((p, None))
                continue
            with conf.at(p, created) as place:
                _same(place, p)
                tmp = temp_name(place.name)
                number = noted.enter_context(temporaries.temporary(place.fd, tmp))
                staged.append((p, tmp))
                dirfd.copy_node(store, copy, place.fd, tmp)
                temporaries.LEDGER.made(number, place.fd, tmp)
        yield staged
        ok = True
    finally:
        if not ok:
            for p, tmp in staged:
                if tmp is not None:
                    with _reached(conf, p) as place:
                        if place is not None:
                            dirfd.remove_quietly(place.fd, tmp)
            for fd, name in reversed(created):
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError:
                    break
        for fd, _ in created:
            os.close(fd)


def _same(place: Place, p: ResolvedPath) -> None:
    if place.path.path != p.path:
        raise ToolError(
            ErrorCode.ACCESS_DENIED,
            f"{p} is now reached through a symbolic link (to {place.path}) that was not on the way; nothing was restored",
        )


@contextmanager
def _reached(conf: Confinement, p: ResolvedPath) -> Iterator[Place | None]:
    try:
        place = conf.reach(p)
    except (FileNotFoundError, NotADirectoryError):
        yield None
        return
    try:
        yield place
    finally:
        conf.release(place.fd)
