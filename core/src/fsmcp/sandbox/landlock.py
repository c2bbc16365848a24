"""Landlock, the kernel's unprivileged sandbox: the ABI probe and the ruleset builder.

A small ``ctypes`` layer over the three system calls rather than a binding: the one maintained
on the package index (``landlock`` 1.0.0.dev5) handles file-system rights only (no TCP, no
scoping), applies a ruleset to the calling process (here the ruleset is built by the server
and applied by the launcher to the program alone), and is a development release. The calls
and structures below are those of the kernel's ``linux/landlock.h``.

The ruleset is built in the server, where it costs nothing to the child: each grant opens its
path with ``O_PATH`` and adds a rule on that inode. A rule on a directory covers everything
beneath it; a rule on a file covers that file only, so a caller that must keep one file out of
reach can grant its siblings one by one instead of their directory (:attr:`Ruleset.hidden`).
"""

from __future__ import annotations

import ctypes
import functools
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .launch import SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_CREATE_RULESET

CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

READ = READ_FILE | READ_DIR
RUN = READ | EXECUTE
WRITE = WRITE_FILE | TRUNCATE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | MAKE_FIFO | MAKE_SOCK | REFER
"""Everything a program needs to change a tree; devices (MAKE_CHAR, MAKE_BLOCK) are never granted."""
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The only rights a rule on a file (not a directory) may carry."""

_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
"""The file-system rights each ABI knows; from 5 on, all 16."""


def handled_fs(abi: int) -> int:
    return _FS_BY_ABI.get(abi, (1 << 16) - 1)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: a 64-bit mask, then a 32-bit descriptor
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def _call(*args: object) -> int:
    result = _syscall(*args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


@functools.cache
def abi() -> int:
    """The highest Landlock ABI the kernel offers; 0 when it offers none (too old, not built in,
    or not enabled at boot)."""
    try:
        return _call(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except OSError:
        return 0


@dataclass
class Ruleset:
    """The grants for one program, made into a kernel ruleset by :meth:`build`.

    Everything not granted is denied: file access, and (from ABI 4, unless ``network``) TCP
    bind and connect; from ABI 6 the program can neither signal processes outside its sandbox
    (the server among them) nor connect to abstract UNIX sockets outside it.
    """

    abi: int
    network: bool = False
    grants: dict[str, int] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    """Absolute paths (files, or directories and all beneath) that no grant may reach.

    A grant on a directory above one is split: the directory and each directory between it and
    the hidden path get their rights less reading and running files and removing or renaming
    entries, every other entry beside them the full rights. Rules hold on inodes, so a program
    can neither read a hidden file nor one it creates in such a directory (it may create and
    write it: the other write rights stay); a hidden file can be overwritten, not read, and it
    keeps its name (a rename would give the server's own tools a plain name to read it by; a
    hard link is refused by the launcher's filter, ``launch.forbid_links``).
    """
    pinned: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Files (absolute path → device, inode) the program may read only as that very file: the grants
    are split around each as around a hidden one, and the file is granted reading on its own inode,
    if the inode at the path when the ruleset is built is that one. A file swapped in at the path,
    before or after, is another inode, and not readable (a file the user allowed once is this)."""

    def grant(self, path: str | os.PathLike[str], rights: int) -> None:
        """Allow ``rights`` on ``path`` and (for a directory) everything beneath it. Rights add up."""
        key = os.fspath(path)
        self.grants[key] = self.grants.get(key, 0) | rights

    def grant_each(self, paths: Iterable[str | os.PathLike[str]], rights: int) -> None:
        for path in paths:
            self.grant(path, rights)

    def build(self, *, leaving: Sequence[str] = ()) -> int:
        """The ruleset's descriptor (close-on-exec; hand it to the launcher). Paths that do not
        exist are skipped: a grant allows, it never requires. The rules at or beneath
        ``leaving`` (roots the launcher overlays) are left for the launcher (:meth:`beneath`)."""
        fs = handled_fs(self.abi)
        attr = _RulesetAttr(
            handled_access_fs=fs,
            handled_access_net=0 if self.network or self.abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP,
            scoped=SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if self.abi >= 6 else 0,
        )
        fd = _call(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
        try:
            for path, rights in self._split().items():
                if not _beneath(path, leaving):
                    self._add(fd, path, rights & fs)
            for path, ident in self.pinned.items():
                self._add(fd, path, READ_FILE & fs, ident)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def beneath(self, roots: Sequence[str]) -> list[tuple[int, str]]:
        """The rules at or beneath ``roots``, as (rights, path): added by the launcher once it has
        mounted an overlay on each root (a rule made before on the root's own directory would sit
        on a mount point hidden under the overlay, never reached from the view)."""
        fs = handled_fs(self.abi)
        return [(rights & fs, os.path.normpath(path)) for path, rights in self._split().items() if _beneath(path, roots)]

    def _split(self) -> dict[str, int]:
        if not self.hidden and not self.pinned:
            return self.grants
        hidden = {os.path.normpath(h) for h in (*self.hidden, *self.pinned)}
        above = {os.path.dirname(h) for h in hidden}
        for path in list(above):
            while path not in ("/", ""):
                path = os.path.dirname(path)
                above.add(path)
        rules: dict[str, int] = {}
        for path, rights in self.grants.items():
            path = os.path.normpath(path)
            if any(h == path or h.startswith(path.rstrip("/") + "/") for h in hidden):
                _around(path, rights, hidden, above, rules)
            else:
                rules[path] = rules.get(path, 0) | rights
        return rules

    @staticmethod
    def _add(ruleset: int, path: str, rights: int, ident: tuple[int, int] | None = None) -> None:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC | (os.O_NOFOLLOW if ident else 0))
        except OSError:
            return
        try:
            st = os.fstat(target)
            if ident is not None and (st.st_dev, st.st_ino) != ident:
                return  # not the file pinned: nothing granted
            if not stat.S_ISDIR(st.st_mode):
                rights &= FILE_RIGHTS
            if rights:
                rule = _PathBeneath(allowed_access=rights, parent_fd=target)
                _call(SYS_LANDLOCK_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
        finally:
            os.close(target)


def _beneath(path: str, roots: Sequence[str]) -> bool:
    path = os.path.normpath(path)
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _around(directory: str, rights: int, hidden: set[str], above: set[str], rules: dict[str, int]) -> None:
    if directory in hidden:
        return
    # Nothing of this directory can be read, run, removed or renamed: a hidden file (or the
    # directory leading to one, whose path a glob may protect) keeps its name.
    rules[directory] = rules.get(directory, 0) | (rights & ~(READ_FILE | EXECUTE | REMOVE_FILE | REMOVE_DIR))
    try:
        with os.scandir(directory) as entries:
            children = [(e.path, e.is_symlink()) for e in entries]
    except OSError:
        return
    for path, link in children:
        if path in hidden or link:
            continue  # a link is reached through its target's own rules, never granted as its target
        if path in above:
            _around(path, rights, hidden, above, rules)
        else:
            rules[path] = rules.get(path, 0) | rights
