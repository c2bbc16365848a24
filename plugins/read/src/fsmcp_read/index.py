"""Where lines start in big files, kept per file version, so a second line range does not rescan.

For every block of :data:`STEP` bytes the index holds how many newlines come before it; a line
is then found by reading one block. An index grows as far as the reads have scanned, is kept
for :data:`KEPT` files (the least recently used goes), and belongs to one version of a file:
its device, inode, size, mtime and ctime. A file changed in any of those gets a new index.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left
from collections import OrderedDict
from typing import BinaryIO

STEP = 1 << 20
SMALLEST = 8 * STEP
"""Smaller files are scanned: eight blocks cost less than keeping an index."""
KEPT = 16
"""Files whose index is kept: 16 indexes of 1 GiB files are 16,000 integers."""

_lock = threading.Lock()
_indexes: OrderedDict[tuple[int, ...], list[int]] = OrderedDict()


def _version(fh: BinaryIO) -> tuple[int, ...] | None:
    try:
        st = os.fstat(fh.fileno())
    except (AttributeError, OSError, ValueError):  # not a real file (a test's BytesIO)
        return None
    if st.st_size < SMALLEST:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class Scan:
    """Newline counts of one open file, block by block, from its index when it has one."""

    def __init__(self, fh: BinaryIO):
        self.fh = fh
        self.key = _version(fh)
        with _lock:
            known = _indexes.get(self.key) if self.key is not None else None
            if known is not None:
                _indexes.move_to_end(self.key)
        self.before = list(known) if known is not None else [0]
        """``before[k]``: newlines in the file's first ``k * STEP`` bytes."""

    def newlines_before(self, offset: int) -> int:
        """How many ``\\n`` bytes lie before byte ``offset``."""
        self._extend(offset // STEP)
        k = min(offset // STEP, len(self.before) - 1)
        self.fh.seek(k * STEP)
        return self.before[k] + self.fh.read(offset - k * STEP).count(b"\n")

    def block_of(self, newline: int) -> tuple[int, int]:
        """``(k, count)``: block ``k`` holds the ``newline``-th ``\n`` (1-based) or a later
        byte, and ``count`` newlines lie before it."""
        k = bisect_left(self.before, newline) - 1
        while k == len(self.before) - 1 and self._grow():
            k = bisect_left(self.before, newline) - 1
        return k, self.before[k]

    def _extend(self, k: int) -> None:
        while len(self.before) - 1 < k and self._grow():
            pass

    def _grow(self) -> bool:
        """Count one more block; False at the end of the file (a partial last block is not kept)."""
        k = len(self.before) - 1
        self.fh.seek(k * STEP)
        block = self.fh.read(STEP)
        if len(block) < STEP:
            return False
        self.before.append(self.before[-1] + block.count(b"\n"))
        return True

    def keep(self) -> None:
        """Remember what this scan counted, for the next read of the same version."""
        if self.key is None or len(self.before) < 2:
            return
        with _lock:
            known = _indexes.get(self.key)
            if known is None or len(known) < len(self.before):
                _indexes[self.key] = self.before
            _indexes.move_to_end(self.key)
            while len(_indexes) > KEPT:
                _indexes.popitem(last=False)
