"""Taking a part of an open file within a budget: forward by lines, backward for tail, by bytes.

``read_file`` asks once where its selection lies (:func:`region`) and once for its content
(:func:`take`); only this module walks the file (through :mod:`.lines` and its line index).
Every function reads only as far as it needs (plus one block), so a 50 MB file costs about
as much memory as the budget, and each says exactly where a caller can continue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Literal, NamedTuple

from .content import decode
from .lines import char_boundary, count_newlines, iter_lines, locate_line, tail_start


class Selection(NamedTuple):
    """The part of the file asked for, in one of three shapes."""

    kind: Literal["lines", "tail", "bytes"]
    start_line: int = 1
    max_lines: int | None = None
    end_line: int | None = None
    """The endLine the caller gave (head is not one): clamping it earns a note."""
    tail: int = 0
    offset: int = 0
    length: int | None = None
    whole: bool = False


class Region(NamedTuple):
    """Where a selection lies in one file."""

    start: int | None
    """Its first byte; None when it begins past the end of the file."""
    stop: int | None = None
    """The byte it stops at; None: the end of the file, or as far as lines and budget go."""
    note: str | None = None
    """What the reader should know when the selection reaches past the end."""


def region(fh: BinaryIO, sel: Selection, size: int) -> Region:
    """Where ``sel`` lies; a line number is found through the file's line index."""
    if sel.kind == "tail":
        return Region(0)
    if sel.kind == "lines":
        start, counted = locate_line(fh, sel.start_line)
        past = start is None and size
        return Region(start, note=f"[note: the file has {counted} lines; startLine={sel.start_line} is past its end]" if past else None)
    stop = None if sel.length is None else sel.offset + sel.length
    if sel.offset >= size:
        past = sel.offset > 0 or sel.length is not None
        return Region(None, stop, f"[note: the file is {size:,} bytes; offset={sel.offset} is past its end]" if past else None)
    if stop is not None and stop > size:
        return Region(sel.offset, stop, f"[note: the file is {size:,} bytes; the range was clamped to bytes {sel.offset}-{size - 1}]")
    return Region(sel.offset, stop)


def take(fh: BinaryIO, sel: Selection, where: Region, size: int, *, budget: int, text: bool, numbered: bool = False) -> Taken:
    """The selection's content: decoded text within ``budget`` characters, or bytes within ``budget`` bytes."""
    if sel.kind == "tail":
        if text:
            return take_tail_text(fh, size=size, lines=sel.tail, budget=budget, numbered=numbered)
        return tail_bytes(fh, size=size, lines=sel.tail, limit=budget)
    if where.start is None:
        return Taken(start=size, end=size)
    if not text:
        first = sel.start_line if sel.kind == "lines" else None
        return take_bytes(fh, start=where.start, stop=where.stop, limit=budget, first_line=first, max_lines=sel.max_lines)
    if sel.kind == "bytes":
        first = count_newlines(fh, where.start) + 1 if numbered else None
        return take_text(fh, start=where.start, stop=where.stop, budget=budget, first_line=first, numbered=numbered)
    return take_text(fh, start=where.start, budget=budget, first_line=sel.start_line, max_lines=sel.max_lines, numbered=numbered)


@dataclass
class Taken:
    """What was taken from a region, and where the rest of it starts when it was cut."""

    text: str = ""
    data: bytes = b""
    start: int = 0
    """Byte offset of the first byte shown."""
    end: int = 0
    """Byte offset just past the last byte shown."""
    first_line: int | None = None
    lines: int = 0
    """Lines shown, the last one counted even when the file does not end with a newline."""
    invalid: int = 0
    """Bytes shown as U+FFFD because they are not UTF-8."""
    cut: bool = False
    """The region goes on past what was shown (the budget ran out)."""
    next_line: int | None = None
    """Line to continue at, when the cut fell on a line start and lines are counted."""
    exhausted: bool = False
    """The region ran out before ``max_lines`` lines (the file ended first)."""
    partial_last: bool = False
    """For tail: the last line alone is over the budget and only its end is shown."""
    earlier: tuple[int, int, int] | None = None
    """For tail: the byte span and count of requested lines that did not fit, when known."""

    @property
    def last_line(self) -> int | None:
        if self.first_line is None:
            return None
        return self.first_line + max(self.lines, 1) - 1


def take_text(
    fh: BinaryIO,
    *,
    start: int,
    budget: int,
    stop: int | None = None,
    first_line: int | None = None,
    max_lines: int | None = None,
    numbered: bool = False,
) -> Taken:
    """Decoded lines from ``start`` until ``max_lines``, ``stop`` or ``budget`` characters.

    The cut falls on a line boundary, unless not even the first line fits: then inside it.
    """
    if max_lines is None and not numbered:
        # The common case, a small file read whole: one read and one decode instead of a loop
        # over its lines. Bytes never decode to more characters, so budget bytes fit.
        fh.seek(start)
        data = fh.read(max(budget + 1 if stop is None else min(stop - start, budget + 1), 0))
        if len(data) <= budget:
            text, bad = decode(data)
            lines = data.count(b"\n") + int(bool(data) and not data.endswith(b"\n"))
            return Taken(text=text, start=start, end=start + len(data), first_line=first_line, lines=lines, invalid=bad)
    out: list[str] = []
    taken = Taken(start=start, end=start, first_line=first_line)
    used, at_line_start = 0, True
    for off, piece, ends_line in iter_lines(fh, start, stop):
        if at_line_start and max_lines is not None and taken.lines >= max_lines:
            break
        text, bad = decode(piece)
        number = None if first_line is None else first_line + taken.lines
        prefix = f"{number} | " if numbered and at_line_start and number is not None else ""
        room = budget - used
        if len(prefix) + len(text) > room:
            taken.cut = True
            if at_line_start and out:
                taken.next_line = number
                break
            # Bytes never decode to more characters than there are bytes, so k bytes fit k.
            k = char_boundary(piece, max(room - len(prefix), 0))
            if k > 0:
                part, bad = decode(piece[:k])
                out.append(prefix + part)
                taken.invalid += bad
                taken.end = off + k
                taken.lines += int(at_line_start)
            break
        out.append(prefix + text)
        used += len(prefix) + len(text)
        taken.invalid += bad
        taken.end = off + len(piece)
        taken.lines += int(at_line_start)
        at_line_start = ends_line
    else:
        taken.exhausted = max_lines is not None and taken.lines < max_lines
    taken.text = "".join(out)
    return taken


def take_bytes(fh: BinaryIO, *, start: int, limit: int, stop: int | None = None, first_line: int | None = None, max_lines: int | None = None) -> Taken:
    """Raw bytes from ``start`` until ``max_lines`` lines, ``stop`` or ``limit`` bytes."""
    taken = Taken(start=start, end=start, first_line=first_line)
    if max_lines is None:
        fh.seek(start)
        want = limit + 1 if stop is None else min(stop - start, limit + 1)
        data = fh.read(max(want, 0))
        if len(data) > limit:
            data, taken.cut = data[:limit], True
        taken.data, taken.end = data, start + len(data)
        return taken
    out = bytearray()
    at_line_start = True
    for off, piece, ends_line in iter_lines(fh, start, stop):
        if at_line_start and taken.lines >= max_lines:
            break
        if len(out) + len(piece) > limit:
            taken.cut = True
            if at_line_start and out:
                taken.next_line = None if first_line is None else first_line + taken.lines
            else:
                out += piece[: limit - len(out)]
                taken.lines += int(at_line_start)
            break
        out += piece
        taken.lines += int(at_line_start)
        at_line_start = ends_line
    else:
        taken.exhausted = taken.lines < max_lines
    taken.data, taken.end = bytes(out), start + len(out)
    return taken


def take_tail_text(fh: BinaryIO, *, size: int, lines: int, budget: int, numbered: bool = False) -> Taken:
    """The last ``lines`` lines, or as many of the last ones as fit ``budget`` characters."""
    start, complete = tail_start(fh, size, lines, window=4 * budget)
    fh.seek(start)
    region = fh.read(size - start)
    first = count_newlines(fh, start) + 1 if numbered else None
    pieces = _split_lines(region)
    rendered: list[tuple[str, int]] = []
    for i, piece in enumerate(pieces):
        text, bad = decode(piece)
        prefix = f"{first + i} | " if first is not None else ""
        rendered.append((prefix + text, bad))
    keep, used = len(rendered), 0
    while keep > 0 and used + len(rendered[keep - 1][0]) <= budget:
        keep -= 1
        used += len(rendered[keep][0])
    shown_start = start + sum(len(p) for p in pieces[:keep])
    taken = Taken(end=size, first_line=None if first is None else first + keep)
    if keep == len(rendered) and rendered:
        # Not even the last line fits: show the end of it, from a whole character on.
        last = pieces[-1]
        cut = max(len(last) - budget, 0)
        while cut < len(last) and last[cut] & 0xC0 == 0x80:
            cut += 1
        text, taken.invalid = decode(last[cut:])
        taken.text, taken.start, taken.lines = text, size - len(last) + cut, 1
        taken.cut = taken.partial_last = True
        taken.first_line = None
        return taken
    taken.text = "".join(text for text, _ in rendered[keep:])
    taken.invalid = sum(bad for _, bad in rendered[keep:])
    taken.lines = len(rendered) - keep
    taken.start = shown_start
    taken.cut = keep > 0 or not complete
    if keep > 0 and complete:
        taken.earlier = (start, shown_start, keep)
    return taken


def tail_bytes(fh: BinaryIO, *, size: int, lines: int, limit: int) -> Taken:
    """The bytes of the last ``lines`` lines, or the last ``limit`` bytes of them."""
    start, complete = tail_start(fh, size, lines, window=limit)
    if not complete:
        start = size - limit
    fh.seek(start)
    taken = Taken(data=fh.read(size - start), start=start, end=size, cut=not complete)
    taken.lines = len(_split_lines(taken.data))
    return taken


def _split_lines(data: bytes) -> list[bytes]:
    # bytes.splitlines would also split on \r, \v, \f and \x1c-\x1e; only \n ends a line here.
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
