"""Opening an archive for reading, whatever its format (recognised by content)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from .formats import detect
from .options import Limits
from .tarread import TarReader
from .zipread import ZipReader

Reader = ZipReader | TarReader


@contextmanager
def open_reader(fh: BinaryIO, label: str, size: int, limits: Limits) -> Iterator[Reader]:
    """A reader for the archive open as ``fh`` (``size`` bytes long); closed on leaving."""
    fmt = detect(fh, label)
    reader: Reader = ZipReader(fh, label, limits) if fmt == "zip" else TarReader(fh, fmt, label, size, limits)
    try:
        yield reader
    finally:
        reader.close()
