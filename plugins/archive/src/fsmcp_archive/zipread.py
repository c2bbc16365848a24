"""Reading a zip: members from its central directory, judged before zipfile loads it."""

from __future__ import annotations

import stat
import struct
import zipfile
from collections.abc import Iterator
from typing import BinaryIO

from fsmcp import ErrorCode, ToolError

from .members import Member, Tally, metered, reading, too_many
from .options import RATIO_FLOOR, Limits, raise_hint

MAX_LINK_TARGET = 4096
CD_BYTES_PER_MEMBER = 1024
"""A zip's central directory may take this much per allowed member before it is refused unread."""

_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_KINDS = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symlink",
    stat.S_IFCHR: "device",
    stat.S_IFBLK: "device",
    stat.S_IFIFO: "fifo",
    stat.S_IFSOCK: "socket",
}


class ZipReader:
    def __init__(self, fh: BinaryIO, label: str, limits: Limits):
        self.format = "zip"
        self.label = label
        self.limits = limits
        with reading(label):
            entries, directory_bytes = _central_directory(fh)
            fh.seek(0)
            # zipfile loads the whole central directory: judge its size before it does.
            if entries > limits.max_members:
                raise too_many(label, limits, f"{entries:,} members", unread=True)
            if directory_bytes > limits.max_members * CD_BYTES_PER_MEMBER:
                raise ToolError(
                    ErrorCode.FILE_TOO_LARGE,
                    f"{label} has a {directory_bytes:,}-byte member directory, more than the max_members limit of "
                    f"{limits.max_members:,} allows ({CD_BYTES_PER_MEMBER:,} bytes each); it is refused unread "
                    f"({raise_hint('max_members')})",
                )
            self.zf = zipfile.ZipFile(fh)

    def close(self) -> None:
        self.zf.close()

    def members(self) -> Iterator[Member]:
        for n, info in enumerate(self.zf.infolist(), 1):
            if n > self.limits.max_members:
                raise too_many(self.label, self.limits, "more members than its directory record says")
            yield self._member(info)

    def _member(self, info: zipfile.ZipInfo) -> Member:
        bits = info.external_attr >> 16
        unix = info.create_system == 3 and bits != 0
        file_type = stat.S_IFMT(bits) if unix else 0
        if info.filename.endswith("/"):
            kind = "directory"
        elif file_type:
            kind = _KINDS.get(file_type, "other")
        else:
            kind = "file"
        member = Member(
            _zip_name(info),
            kind,
            info.file_size if kind == "file" else 0,
            stat.S_IMODE(bits) if unix else None,
            packed=info.compress_size,
            unreadable=_unreadable(info),
            ref=info,
        )
        if kind == "symlink" and member.unreadable is None:
            # Info-ZIP stores a link as a member whose content is its target.
            with reading(self.label), self.zf.open(info) as f:
                data = f.read(MAX_LINK_TARGET + 1)
            member.target = data.decode("utf-8", "surrogateescape") if len(data) <= MAX_LINK_TARGET else None
        return member

    def chunks(self, member: Member, tally: Tally) -> Iterator[bytes]:
        with reading(self.label):
            f = self.zf.open(member.ref)
        packed = max(member.packed or 0, 1)
        yield from metered(f, self.label, member, tally, lambda produced: produced / packed if produced > RATIO_FLOOR else None)


def _unreadable(info: zipfile.ZipInfo) -> str | None:
    if info.flag_bits & 0x1:
        return "is encrypted, and extraction cannot decrypt"
    if info.compress_type not in _METHODS:
        return f"uses compression method {info.compress_type}, which this server cannot read (stored, deflate, bzip2 and lzma are)"
    return None


def _zip_name(info: zipfile.ZipInfo) -> str:
    name = info.orig_filename
    if not info.flag_bits & 0x800:
        # Many zip writers store UTF-8 names without setting the flag that says so.
        try:
            return name.encode("cp437").decode("utf-8")
        except UnicodeError:
            pass
    return name


def _central_directory(fh: BinaryIO) -> tuple[int, int]:
    """(member count, directory size) from the end-of-central-directory records."""
    end = fh.seek(0, 2)
    span = min(end, 22 + 0xFFFF)
    fh.seek(end - span)
    tail = fh.read(span)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise zipfile.BadZipFile("no end-of-central-directory record")
    entries, size = struct.unpack("<HI", tail[at + 10 : at + 16])
    if (entries == 0xFFFF or size == 0xFFFFFFFF) and end - span + at >= 20:
        fh.seek(end - span + at - 20)
        locator = fh.read(20)
        if locator[:4] == b"PK\x06\x07":
            fh.seek(struct.unpack("<Q", locator[8:16])[0])
            record = fh.read(56)
            if record[:4] == b"PK\x06\x06":
                entries, size = struct.unpack("<QQ", record[32:48])
    return entries, size
