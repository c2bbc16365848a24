"""Byte-level line streaming over an open binary file: memory stays bounded by the block size.

A line is the bytes up to and including ``\\n``; a last line without one is still a line, and
a final ``\\n`` ends the last line rather than starting an empty one, so ``a\\nb\\n`` has two.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from .index import STEP, Scan

BLOCK = 1 << 20
PIECE = 64 * 1024
"""Longest piece of one line yielded at once: a minified 50 MB line never sits in memory whole."""


def char_boundary(data: bytes | bytearray, pos: int) -> int:
    """``pos`` moved back to the start of the UTF-8 character it falls in (at most 3 bytes)."""
    floor = max(pos - 3, 0)
    while pos > floor and pos < len(data) and data[pos] & 0xC0 == 0x80:
        pos -= 1
    return pos


def iter_lines(fh: BinaryIO, start: int, stop: int | None = None) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(offset, piece, ends_line)`` from ``start`` up to ``stop`` (None: end of file).

    A piece is a whole line, or a part of one longer than :data:`PIECE` (cut on a character
    boundary); ``ends_line`` is False for every part but the last.
    """
    fh.seek(start)
    left = None if stop is None else max(stop - start, 0)
    buf, i, offset, eof = b"", 0, start, False
    while True:
        nl = buf.find(b"\n", i, i + PIECE)
        if nl != -1:
            yield offset, buf[i : nl + 1], True
            offset += nl + 1 - i
            i = nl + 1
            continue
        if len(buf) - i >= PIECE:
            cut = char_boundary(buf, i + PIECE)
            cut = cut if cut > i else i + PIECE
            yield offset, buf[i:cut], False
            offset += cut - i
            i = cut
            continue
        if eof:
            if i < len(buf):
                yield offset, buf[i:], stop is None
            return
        size = BLOCK if left is None else min(BLOCK, left)
        data = fh.read(size) if size else b""
        if left is not None:
            left -= len(data)
        if not data:
            eof = True
        buf, i = buf[i:] + data, 0


def locate_line(fh: BinaryIO, line: int) -> tuple[int | None, int]:
    """The byte offset where 1-based ``line`` starts, and the lines counted on the way.

    Returns ``(None, total_lines)`` when the file has fewer lines than ``line``. A big file's
    line index (:mod:`.index`) takes the scan to the block the line starts in.
    """
    if line <= 1:
        fh.seek(0)
        return (0 if fh.read(1) else None), 0
    wanted = line - 1  # newlines to pass
    scan = Scan(fh)
    k, seen = scan.block_of(wanted)
    offset, last = k * STEP, b""
    fh.seek(offset)
    try:
        while True:
            block = fh.read(BLOCK)
            if not block:
                total = seen + (1 if last and last != b"\n" else 0)
                return None, total
            count = block.count(b"\n")
            if seen + count >= wanted:
                pos = -1
                for _ in range(wanted - seen):
                    pos = block.find(b"\n", pos + 1)
                start = offset + pos + 1
                fh.seek(start)
                if fh.read(1):
                    return start, line - 1
                return None, line - 1
            seen += count
            offset += len(block)
            last = block[-1:]
    finally:
        scan.keep()


def count_newlines(fh: BinaryIO, upto: int) -> int:
    """How many ``\\n`` bytes lie before byte ``upto``."""
    scan = Scan(fh)
    try:
        return scan.newlines_before(upto)
    finally:
        scan.keep()


def tail_start(fh: BinaryIO, size: int, lines: int, window: int) -> tuple[int, bool]:
    """Where the last ``lines`` lines begin, scanning backwards at most ``window`` bytes.

    Returns ``(offset, complete)``. When the lines reach further back than the window,
    ``offset`` is the first line start inside it and ``complete`` is False; when not even one
    line starts inside the window, ``offset`` is ``size - window`` on a character boundary.
    """
    if size == 0:
        return 0, True
    fh.seek(size - 1)
    end = size - 1 if fh.read(1) == b"\n" else size
    floor = max(size - window, 0)
    found, hi, earliest = 0, end, None
    while hi > floor:
        lo = max(hi - BLOCK, floor)
        fh.seek(lo)
        block = fh.read(hi - lo)
        idx = len(block)
        while True:
            idx = block.rfind(b"\n", 0, idx)
            if idx == -1:
                break
            found += 1
            earliest = lo + idx + 1
            if found == lines:
                return earliest, True
        hi = lo
    if floor == 0:
        return 0, True
    if earliest is not None:
        return earliest, False
    # Not one line starts in the window: begin at its first whole character.
    fh.seek(floor)
    head = fh.read(4)
    skip = 0
    while skip < len(head) - 1 and head[skip] & 0xC0 == 0x80:
        skip += 1
    return floor + skip, False
