"""A file's bytes as editable text, and back, byte for byte.

Undecodable bytes (Latin-1, binary) ride through as surrogate escapes, a UTF-8 byte-order
mark is set aside and put back, and line endings stay in the text as they are, so encoding
the text unchanged gives back exactly the bytes that were read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fsmcp import ErrorCode, ToolError

UTF8_BOM = b"\xef\xbb\xbf"
CHUNK = 1 << 22
"""Characters encoded at a time on the way to the file: a big file is never held twice as bytes."""
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class Document:
    bom: bytes
    text: str

    @classmethod
    def decode(cls, data: bytes, path: object) -> Document:
        if data.startswith(_UTF16_BOMS):
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"{path} is UTF-16 text; edit_file edits UTF-8 and single-byte text. Convert it, or rewrite it with write_file",
            )
        bom = UTF8_BOM if data.startswith(UTF8_BOM) else b""
        return cls(bom, data[len(bom) :].decode("utf-8", "surrogateescape"))

    def encode(self, text: str) -> bytes:
        return b"".join(self.chunks(text))

    def chunks(self, text: str) -> Iterator[bytes]:
        """``text`` as the file's bytes, a piece at a time."""
        if self.bom:
            yield self.bom
        # Edits bring no surrogates of their own (the models refuse them), so every one here
        # is an undecodable byte of the file going back where it came from.
        for at in range(0, len(text), CHUNK):
            yield text[at : at + CHUNK].encode("utf-8", "surrogateescape")


def shown(text: str) -> str:
    """Text fit for a message: bytes that are not UTF-8 appear as ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
