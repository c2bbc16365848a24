"""The content a write tool is given, as the bytes to write: decoded, counted, checked."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ResolvedPath, ToolError

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import WriteFileInput


def prepare(args: WriteFileInput, ctx: ToolContext) -> tuple[ResolvedPath, bytes]:
    data = decode_base64(args.content) if args.encoding == "base64" else utf8(args.content)
    if args.line_count is not None and (lines := line_count(data)) != args.line_count:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{args.path}: content holds {lines} line(s), not the lineCount {args.line_count} given; nothing was written. "
            "It may have been cut short: send the whole content again",
            {"lineCount": lines},
        )
    refuse_directory_syntax(args.path)
    return ctx.fs.resolve(args.path, Access.WRITE), data


def line_count(data: bytes) -> int:
    """Newlines, plus one for a last line without one: "a\nb" and "a\nb\n" both hold 2, "" none."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def wrote(target: ResolvedPath, data: bytes, created: bool) -> str:
    return f"Successfully wrote {byte_count(len(data))} to {target} ({'created' if created else 'replaced'})"


def refuse_directory_syntax(raw: str) -> None:
    # The policy drops a trailing slash; without this check "notes/" would become a file "notes".
    if raw.endswith("/") and raw.strip("/"):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{raw!r} ends with '/', which names a directory; give the path of the file, including its name",
        )


def utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # JSON can carry a lone surrogate ("\ud800") that no UTF-8 file can hold.
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"content holds a character UTF-8 cannot encode at position {exc.start} (a lone surrogate); "
            "send valid Unicode text, or the bytes with encoding: base64",
        ) from None


def decode_base64(content: str) -> bytes:
    # Models wrap long base64 in lines, drop padding or use the URL-safe alphabet: all accepted.
    compact = "".join(content.split())
    if len(compact) % 4 in (2, 3):
        compact += "=" * (4 - len(compact) % 4)
    altchars = b"-_" if ("-" in compact or "_" in compact) else None
    try:
        return base64.b64decode(compact, altchars=altchars, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"content is not valid base64 ({exc}); send the bytes base64-encoded, "
            "or pass encoding: utf-8 to write the text as it is",
        ) from None


def byte_count(n: int) -> str:
    return "1 byte" if n == 1 else f"{n} bytes"
