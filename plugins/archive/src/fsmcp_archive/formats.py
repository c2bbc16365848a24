"""Archive formats: chosen from an output's name, recognised in an input by its content."""

from __future__ import annotations

import tarfile
import zipfile
from typing import BinaryIO

from fsmcp import ErrorCode, ToolError

FORMATS = ("zip", "tar", "tar.gz", "tar.bz2", "tar.xz")
_EXTENSIONS = {
    ".zip": "zip",
    ".tar": "tar",
    ".tar.gz": "tar.gz",
    ".tgz": "tar.gz",
    ".tar.bz2": "tar.bz2",
    ".tbz2": "tar.bz2",
    ".tbz": "tar.bz2",
    ".tar.xz": "tar.xz",
    ".txz": "tar.xz",
}
_COMPRESSED = {b"\x1f\x8b": "tar.gz", b"BZh": "tar.bz2", b"\xfd7zXZ\x00": "tar.xz"}
_UNSUPPORTED = {
    b"\x28\xb5\x2f\xfd": "a zstd-compressed file",
    b"7z\xbc\xaf\x27\x1c": "a 7-Zip archive",
    b"Rar!\x1a\x07": "a RAR archive",
    b"\x04\x22\x4d\x18": "an LZ4-compressed file",
}


def from_name(name: str) -> str | None:
    """The format an output's extension names, or None."""
    lower = name.lower()
    for ext in sorted(_EXTENSIONS, key=len, reverse=True):
        if lower.endswith(ext):
            return _EXTENSIONS[ext]
    return None


def for_output(requested: str | None, name: str) -> str:
    """The format to write: the one requested, else the extension's, else zip.

    A requested format that contradicts a known archive extension is refused: the file would
    lie about what it holds.
    """
    named = from_name(name)
    if requested is None:
        return named or "zip"
    if named is not None and named != requested:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"the output {name!r} is named like a {named} archive but format is {requested}; "
            f"rename the output or leave format out to use {named}",
        )
    return requested


def detect(fh: BinaryIO, label: str) -> str:
    """The format of an open archive, from its first bytes (its name plays no part)."""
    head = fh.read(512)
    fh.seek(0)
    if not head:
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{label} is empty, not an archive")
    for magic, fmt in _COMPRESSED.items():
        if head.startswith(magic):
            return fmt
    if head[257:262] == b"ustar":
        return "tar"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or _ends_like_zip(fh):
        fh.seek(0)
        return "zip"
    fh.seek(0)
    if len(head) == 512 and (head == bytes(512) or _is_old_tar_header(head)):
        return "tar"
    for magic, what in _UNSUPPORTED.items():
        if head.startswith(magic):
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{label} is {what}; only zip and tar (plain, gzip, bzip2, xz) are supported")
    raise ToolError(
        ErrorCode.INVALID_PARAMS,
        f"{label} is not a zip or tar archive (plain, gzip, bzip2 or xz); check the path, or read_file it to see what it is",
    )


def _ends_like_zip(fh: BinaryIO) -> bool:
    try:
        return zipfile.is_zipfile(fh)
    except zipfile.BadZipFile:
        return True  # it has a zip's end record, if a broken one: the zip reader says what is wrong


def _is_old_tar_header(block: bytes) -> bool:
    # Pre-POSIX tars carry no magic: only the header checksum tells them apart.
    try:
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True
