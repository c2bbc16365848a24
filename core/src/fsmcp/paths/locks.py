"""The per-file locks between server processes: an OFD lock per path on one shared file.

Apart from :mod:`fsmcp.paths.guard` so that a start answered from the tool-list cache
(:mod:`fsmcp.run.catalog`) checks the lock file's place without loading the host.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import struct
import weakref
from pathlib import Path

from .state import private_dir, state_home

NAME = "files.lock"
SUPPORTED = hasattr(fcntl, "F_OFD_SETLK")
"""OFD locks: Linux 3.15 and later. Elsewhere (macOS) the locks are each process's own."""
_FIX = "set XDG_STATE_HOME to a directory of this user's alone"


def lock_dir() -> Path:
    """Where the lock file lives: beside the journal's default, in this user's XDG state directory.

    Not ``$XDG_RUNTIME_DIR``: a server started by an editor, one by a service manager and the
    CLI in a terminal may not all have it, and servers that disagree on the file do not wait
    for each other. The file is empty: it costs no disk.
    """
    return Path(os.path.realpath(state_home() / "fsmcp" / "locks"))


def prepare() -> Path:
    """The lock file's path, its directory made ``0700`` when missing; ValueError saying what to
    change when the directory is not this user's alone (another user could hold its locks)."""
    directory = lock_dir()
    private_dir(directory, "the lock directory", _FIX, "hold its locks and stall every change")
    return directory / NAME


class FileLocks:
    """The per-file locks between processes: an OFD lock on one byte of one file per user.

    The byte is chosen by a hash of the file's real path, as the locks within a process are
    keyed: a path, not an inode, since an atomic write replaces the inode the next writer must
    wait for. One empty file serves every path (no file per path to make, count or clean up;
    the kernel keeps the locks, none on disk), and a lock ends with its process, however it
    ends, so a killed server leaves none behind. OFD locks, not ``flock`` or POSIX record locks:
    a byte range each, owned by this open file (the process's other descriptors of it, and the
    programs it starts, which do not inherit it, cannot drop them).
    """

    def __init__(self, path: Path):
        """``path`` as :func:`prepare` returns it; ValueError when it cannot be opened."""
        self.path = path
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise ValueError(f"the lock file {self.path} cannot be opened ({exc.strerror or exc}); {_FIX}") from None
        weakref.finalize(self, os.close, self._fd)

    @staticmethod
    def _range(key: str, kind: int) -> bytes:
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0, as OFD locks require), padding.
        byte = int.from_bytes(hashlib.blake2b(os.fsencode(key), digest_size=8).digest()) >> 2
        return struct.pack("hhqqi4x", kind, os.SEEK_SET, byte, 1, 0)

    def try_lock(self, key: str) -> bool:
        """Take ``key``'s lock unless another process (or another host) holds it."""
        try:
            fcntl.fcntl(self._fd, fcntl.F_OFD_SETLK, self._range(key, fcntl.F_WRLCK))
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def unlock(self, key: str) -> None:
        fcntl.fcntl(self._fd, fcntl.F_OFD_SETLK, self._range(key, fcntl.F_UNLCK))
