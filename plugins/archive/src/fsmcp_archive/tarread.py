"""Reading a tar, plain or compressed: members header by header, data through tarfile."""

from __future__ import annotations

import bz2
import gzip
import lzma
import tarfile
from collections.abc import Iterator
from typing import Any, BinaryIO

from fsmcp import ErrorCode, ToolError

from .members import Member, Tally, metered, ratio_error, reading, too_many
from .options import RATIO_FLOOR, Limits
from .text import shown

MAX_HEADER_RECORD = 1 << 20
"""The largest pax or GNU long-name record read: a real one is a few hundred bytes."""

_DECOMPRESSORS = {
    "tar.gz": lambda fh: gzip.GzipFile(fileobj=fh, mode="rb"),
    "tar.bz2": bz2.BZ2File,
    "tar.xz": lzma.LZMAFile,
}


class TarReader:
    def __init__(self, fh: BinaryIO, fmt: str, label: str, size: int, limits: Limits):
        self.format = fmt
        self.label = label
        self.limits = limits
        self.size = size
        self.compressed = fmt != "tar"
        self._raw = fh
        with reading(label):
            self._stream = _DECOMPRESSORS[fmt](fh) if self.compressed else fh
            self._guarded = _RecordGuard(self._stream, label)
            self.tar = tarfile.open(fileobj=self._guarded, mode="r:")

    def close(self) -> None:
        self.tar.close()
        if self._stream is not self._raw:
            self._stream.close()

    def members(self) -> Iterator[Member]:
        declared = 0
        n = 0
        while True:
            with reading(self.label):
                info = self.tar.next()
            if info is None:
                return
            n += 1
            if n > self.limits.max_members:
                raise too_many(self.label, self.limits, f"more than {self.limits.max_members:,} members")
            declared += info.size if info.isreg() else 0
            # Judged before the next header is sought, which decompresses this member's data.
            if self.compressed and declared > RATIO_FLOOR and declared / max(self.size, 1) > self.limits.max_ratio:
                raise ratio_error(self.label, declared / max(self.size, 1), self.limits)
            yield _tar_member(info)

    def chunks(self, member: Member, tally: Tally) -> Iterator[bytes]:
        with reading(self.label):
            f = self.tar.extractfile(member.ref)
        if f is None:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"member {shown(member.raw)} of {self.label} has no data to read")
        yield from metered(f, self.label, member, tally, lambda produced: self._stream_ratio())

    def _stream_ratio(self) -> float | None:
        if not self.compressed:
            return None
        out = self._stream.tell()
        return out / max(self._raw.tell(), 1) if out > RATIO_FLOOR else None


def _tar_member(info: tarfile.TarInfo) -> Member:
    if info.isreg():
        kind = "file"
    elif info.isdir():
        kind = "directory"
    elif info.issym():
        kind = "symlink"
    elif info.islnk():
        kind = "hardlink"
    elif info.ischr() or info.isblk():
        kind = "device"
    elif info.isfifo():
        kind = "fifo"
    else:
        kind = "other"
    target = info.linkname if kind in ("symlink", "hardlink") else None
    return Member(info.name, kind, info.size if kind == "file" else 0, info.mode & 0o7777, target, ref=info)


class _RecordGuard:
    """The tar stream as tarfile reads it, refusing any one read past MAX_HEADER_RECORD.

    tarfile reads a pax or GNU long-name record whole, however large its header says it is;
    member data is read in CHUNK pieces, so only a hostile record trips this.
    """

    def __init__(self, stream: Any, label: str):
        self._stream = stream
        self._label = label

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > MAX_HEADER_RECORD:
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{self._label} has a tar header record of {n:,} bytes (pax or GNU long name); records over "
                f"{MAX_HEADER_RECORD:,} bytes are refused as hostile",
            )
        return self._stream.read(n)

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._stream.seek(pos, whence)

    def tell(self) -> int:
        return self._stream.tell()
