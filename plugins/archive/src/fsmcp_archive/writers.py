"""Archives written as a stream of byte chunks, member by member, never whole in memory.

tar is written here from ``TarInfo.tobuf`` headers (tarfile's own writer copies a member's data
in one go, which a generator cannot interleave), compressed by the codec objects of zlib, bz2
and lzma. zip is written by zipfile into a sink that hands over what it holds after every chunk.
"""

from __future__ import annotations

import bz2
import lzma
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import BinaryIO

from fsmcp import ErrorCode, ToolError

from .gather import Item
from .progress import Progress

CHUNK = 1 << 20
Opener = Callable[[Item], AbstractContextManager[BinaryIO]]


def chunks(fmt: str, items: list[Item], open_file: Opener, progress: Progress, notes: list[str]) -> Iterator[bytes]:
    """The archive's bytes. ``notes`` gains a line for each file that changed while read."""
    if fmt == "zip":
        return _zip(items, open_file, progress)
    stream = _tar(items, open_file, progress, notes)
    return stream if fmt == "tar" else _compressed(stream, fmt)


def _tar(items: list[Item], open_file: Opener, progress: Progress, notes: list[str]) -> Iterator[bytes]:
    offset = 0
    for item in items:
        info = tarfile.TarInfo(item.name)
        info.mode, info.mtime = item.mode, int(item.mtime)
        if item.kind == "directory":
            info.type = tarfile.DIRTYPE
        elif item.kind == "symlink":
            info.type, info.linkname = tarfile.SYMTYPE, item.target or ""
        else:
            info.size = item.size
        header = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
        offset += len(header)
        yield header
        if item.kind == "file":
            yield from _tar_data(item, open_file, progress, notes)
            offset += _padded(item.size)
        progress.add(members=1)
    end = tarfile.BLOCKSIZE * 2
    end += -(offset + end) % tarfile.RECORDSIZE
    yield bytes(end)


def _tar_data(item: Item, open_file: Opener, progress: Progress, notes: list[str]) -> Iterator[bytes]:
    # The header already holds the size from the walk: exactly that many bytes follow it.
    left = item.size
    with open_file(item) as src:
        while left:
            chunk = src.read(min(CHUNK, left))
            if not chunk:
                raise ToolError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{item.path} shrank while it was being archived; nothing was written, try again when it is not being changed",
                )
            left -= len(chunk)
            progress.add(data=len(chunk))
            yield chunk
        if src.read(1):
            notes.append(f"{item.path}: grew while it was being archived; its first {item.size:,} bytes are stored")
    yield bytes(_padded(item.size) - item.size)


def _padded(size: int) -> int:
    return -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE


def _compressed(stream: Iterator[bytes], fmt: str) -> Iterator[bytes]:
    if fmt == "tar.gz":
        codec = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: a gzip member, header and trailer
    elif fmt == "tar.bz2":
        codec = bz2.BZ2Compressor(9)
    else:
        codec = lzma.LZMACompressor(format=lzma.FORMAT_XZ)
    for chunk in stream:
        out = codec.compress(chunk)
        if out:
            yield out
    yield codec.flush()


class _Sink:
    """A write-only file for zipfile that gives up its bytes on request."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def _zip(items: list[Item], open_file: Opener, progress: Progress) -> Iterator[bytes]:
    sink = _Sink()
    # No seek: zipfile writes each member's sizes after its data (a data descriptor).
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:  # type: ignore[arg-type]
        for item in items:
            info = _zip_info(item)
            if item.kind == "directory":
                zf.writestr(info, b"")
            elif item.kind == "symlink":
                # Info-ZIP's way, which unzip and this plugin read back as a link: the target is the content.
                zf.writestr(info, (item.target or "").encode("utf-8", "surrogateescape"))
            else:
                with open_file(item) as src, zf.open(info, "w") as dst:
                    while chunk := src.read(CHUNK):
                        dst.write(chunk)
                        progress.add(data=len(chunk))
                        yield sink.take()
            progress.add(members=1)
            yield sink.take()
    yield sink.take()


def _zip_info(item: Item) -> zipfile.ZipInfo:
    name = item.name + "/" if item.kind == "directory" else item.name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{item.path} has a name that is not valid UTF-8, which a zip archive cannot hold; use a tar format",
        ) from None
    # zip times run from 1980 to 2107 in local time: a day inside each end stays valid in any zone.
    when = time.localtime(min(max(item.mtime, 315619200), 4354646400))[:6]
    info = zipfile.ZipInfo(name, when)
    info.create_system = 3
    file_type = {"directory": stat.S_IFDIR, "symlink": stat.S_IFLNK}.get(item.kind, stat.S_IFREG)
    info.external_attr = (file_type | item.mode) << 16 | (0x10 if item.kind == "directory" else 0)
    if item.kind == "file":
        info.compress_type = zipfile.ZIP_DEFLATED
        info.file_size = item.size  # zipfile picks zip64 from it for big members
    else:
        info.compress_type = zipfile.ZIP_STORED
        info.CRC = info.compress_size = info.file_size = 0
    return info
