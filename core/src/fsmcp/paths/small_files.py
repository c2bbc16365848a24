"""A small file read whole as it is opened.

Most files a tool reads are small, and a small one is read once and then searched, sniffed and
taken from memory: one ``pread`` costs less than making a buffered reader to read it through.
"""

from __future__ import annotations

import io
import os

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
