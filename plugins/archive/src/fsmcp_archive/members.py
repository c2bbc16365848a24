"""An archive member as its header describes it, and what reading one may run into.

Both readers (``zipread``, ``tarread``) hold the archive to the limits while they read: the
member count before the member list is built, and the bytes each member really produces
(never more than its header declared, never past the total or the compression ratio).
"""

from __future__ import annotations

import lzma
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fsmcp import ErrorCode, ToolError

from .options import Limits, raise_hint
from .text import shown

CHUNK = 256 << 10
"""How much member data is read at a time."""

_CORRUPT = (
    tarfile.TarError,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    OSError,
    ValueError,
    NotImplementedError,
    struct.error,
)


@dataclass
class Member:
    """One archive member as its header describes it."""

    raw: str
    """The name as stored."""
    kind: str
    """file, directory, symlink, hardlink, device, fifo, socket or other."""
    size: int
    mode: int | None
    """Permission bits, or None when the archive does not record them."""
    target: str | None = None
    """A link's target as stored."""
    packed: int | None = None
    """Compressed size, where the format records one per member (zip)."""
    unreadable: str | None = None
    """Why its data cannot be read (encrypted, an unknown compression method), completing "member X ..."."""
    ref: Any = field(default=None, repr=False, compare=False)


class Tally:
    """The bytes an extraction has really produced, held to the limits as they arrive."""

    def __init__(self, limits: Limits, label: str):
        self.limits = limits
        self.label = label
        self.total = 0

    def add(self, member: Member, produced: int, n: int, ratio: float | None) -> None:
        self.total += n
        if produced > member.size:
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"member {shown(member.raw)} of {self.label} holds more data than the {member.size:,} bytes its header "
                "declares; an archive whose headers lie is refused as hostile",
            )
        if self.total > self.limits.max_total_bytes:
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{self.label} expands past the max_total_bytes limit of {self.limits.max_total_bytes:,} bytes while being "
                f"extracted ({raise_hint('max_total_bytes')})",
            )
        if ratio is not None and ratio > self.limits.max_ratio:
            raise ratio_error(self.label, ratio, self.limits, member)


def ratio_error(label: str, ratio: float, limits: Limits, member: Member | None = None) -> ToolError:
    what = f"member {shown(member.raw)} of {label}" if member is not None else label
    return ToolError(
        ErrorCode.FILE_TOO_LARGE,
        f"{what} expands {ratio:,.0f}:1, past the max_ratio limit of {limits.max_ratio:,}:1 (a compression bomb?); "
        f"{raise_hint('max_ratio')}",
    )


def too_many(label: str, limits: Limits, seen: str, *, unread: bool = False) -> ToolError:
    return ToolError(
        ErrorCode.FILE_TOO_LARGE,
        f"{label} holds {seen}, more than the max_members limit of {limits.max_members:,}"
        f"{'; it is refused unread' if unread else ''} ({raise_hint('max_members')})",
    )


@contextmanager
def reading(label: str) -> Iterator[None]:
    """Whatever the archive libraries raise on bad data becomes INVALID_PARAMS naming the archive."""
    try:
        yield
    except ToolError:
        raise
    except _CORRUPT as exc:
        detail = str(exc) or type(exc).__name__
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{label} is damaged or not a valid archive ({detail}); check that the file is complete (a copy or download cut short?)",
        ) from None


def metered(f: Any, label: str, member: Member, tally: Tally, ratio: Callable[[int], float | None]) -> Iterator[bytes]:
    """A member's bytes in chunks, each counted against the limits (``ratio(produced)`` so far)."""
    with f:
        produced = 0
        while True:
            with reading(label):
                chunk = f.read(CHUNK)
            if not chunk:
                return
            produced += len(chunk)
            tally.add(member, produced, len(chunk), ratio(produced))
            yield chunk
