"""What a file holds: text or binary, its MIME type, and decoding that counts what it replaced."""

from __future__ import annotations

import codecs
import mimetypes
import re
from typing import BinaryIO

SAMPLE = 8 * 1024
BINARY_SHARE = 0.3
"""Share of undecodable or control bytes past which a sample is binary, not text with typos.

Latin-1 prose has a few percent of bytes that are not UTF-8; random data has most of them.
"""

_ESCAPED = re.compile("[\udc80-\udcff]")
_CONTROL_BYTES = bytes([*range(0x01, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
"""Control bytes that text does not hold (tab, newlines, form feed and escape are text)."""

# Formats whose headers are often plain ASCII: sniffed first so a PDF is never read as text.
_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"ID3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
    (b"\x00asm", "application/wasm"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"),
]
_RIFF = {b"WEBP": "image/webp", b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}


def sample(fh: BinaryIO) -> bytes:
    fh.seek(0)
    return fh.read(SAMPLE)


def magic_type(head: bytes) -> str | None:
    """The MIME type the first bytes announce, or None."""
    if head[:4] == b"RIFF" and head[8:12] in _RIFF:
        return _RIFF[head[8:12]]
    for prefix, mime in _MAGIC:
        if head.startswith(prefix):
            return mime
    return None


def binary_type(head: bytes, name: str) -> str | None:
    """The MIME type when ``head`` (a file's first bytes) shows a binary file; None for text."""
    mime = magic_type(head)
    if mime is not None:
        return mime
    if not _looks_binary(head):
        return None
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


def _looks_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    try:
        head.decode("utf-8")
        escaped = 0  # valid UTF-8, the usual case, costs one pass in C
    except UnicodeDecodeError:
        # A multi-byte character cut at the sample's end is not an error: decode as unfinished.
        decoded = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(head, final=False)
        escaped = len(_ESCAPED.findall(decoded))
    return escaped + controls > BINARY_SHARE * len(head)


def decode(data: bytes) -> tuple[str, int]:
    """UTF-8 text with each invalid byte as U+FFFD, and how many bytes were replaced."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        return _ESCAPED.subn("\ufffd", text)
