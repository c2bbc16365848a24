"""Whether the roots lie on local disks, where a metadata call or a small read cannot hang.

A quick tool (:attr:`fsmcp.Tool.quick`) runs on the event loop only while this holds: on a
network or user-space file system (NFS, SMB, FUSE, …) a ``stat`` can wait for a server that
is gone, and on the loop that wait would stall every call of every client. The mount table is
read at start-up and read again when the kernel says it changed (``/proc/self/mountinfo``
polls ``POLLPRI`` then), which is asked at most every :data:`RECHECK` seconds: a share
mounted inside a root later is seen within that time.
"""

from __future__ import annotations

import os
import re
import select
import threading
import time
import weakref
from collections.abc import Iterable
from pathlib import Path

MOUNTINFO = "/proc/self/mountinfo"
LOCAL_TYPES = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "bcachefs", "f2fs", "zfs", "jfs", "reiserfs", "nilfs2",
     "tmpfs", "ramfs", "overlay", "squashfs", "erofs", "vfat", "exfat", "ntfs3", "hfsplus"}
)
"""File systems served by the kernel from local storage or memory; any other type (network,
FUSE, procfs, whose files can block) keeps every call in a worker thread."""
RECHECK = 0.05
"""Seconds between two looks at whether the mount table changed, so that a call does not pay
a system call for it every time."""
_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def mount_table(text: str) -> list[tuple[str, str]]:
    """``(mount point, file system type)`` of each line of a ``mountinfo`` text."""
    table = []
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if len(fields) > sep + 1 and len(fields) > 4:
            table.append((_unescape(fields[4]), fields[sep + 1]))
    return table


def all_local(roots: Iterable[Path], table: list[tuple[str, str]]) -> bool:
    """Whether each root's own mount and every mount below a root is of a local type."""
    for root in roots:
        top = str(root)
        below = top.rstrip("/") + "/"
        # The mount holding the root is the last one listed at its longest enclosing point.
        holding = None
        for point, kind in table:
            if point == top or point.startswith(below):
                if kind not in LOCAL_TYPES:
                    return False
            if top == point or top.startswith(point.rstrip("/") + "/"):
                if holding is None or len(point) >= len(holding[0]):
                    holding = (point, kind)
        if holding is None or holding[1] not in LOCAL_TYPES:
            return False
    return True


class LocalRoots:
    """:func:`all_local` of the operator's roots, kept current as the mount table changes."""

    def __init__(self, roots: Iterable[Path], mountinfo: str = MOUNTINFO):
        self._roots = list(roots)
        self._lock = threading.Lock()
        try:
            self._fd: int | None = os.open(mountinfo, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._fd = None  # no mount table to read: nothing is known to be local
            self._local = False
            return
        weakref.finalize(self, os.close, self._fd)
        self._next = 0.0
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLPRI)
        self._local = self._read()

    def __call__(self) -> bool:
        if self._fd is None:
            return False
        now = time.monotonic()
        if now < self._next:
            return self._local
        with self._lock:  # a poll reports a change once: the one who saw it reads the table
            self._next = now + RECHECK
            if self._poll.poll(0):
                self._local = self._read()
            return self._local

    def _read(self) -> bool:
        chunks = []
        os.lseek(self._fd, 0, os.SEEK_SET)
        while chunk := os.read(self._fd, 1 << 16):
            chunks.append(chunk)
        return all_local(self._roots, mount_table(b"".join(chunks).decode("utf-8", "surrogateescape")))
