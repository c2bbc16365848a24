"""write_file and append_file: the tools that put bytes into a file."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ResolvedPath, ToolError, ToolResult, expect_version

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import AppendFileInput, WriteFileInput, WriteFilesInput


def write_file(args: WriteFileInput, ctx: ToolContext) -> ToolResult:
    target, data = _prepared(args, ctx)
    created = ctx.fs.write_atomic(target, data)
    return ToolResult.text(_wrote(target, data, created), {"path": str(target), "bytesWritten": len(data), "created": created})


def write_files(args: WriteFilesInput, ctx: ToolContext) -> ToolResult:
    """Every file or none: all are checked first, then written; a failure puts back those written."""
    prepared = [_prepared(item, ctx) for item in args.files]
    seen: set[str] = set()
    for target, _ in prepared:
        if str(target) in seen:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{target} is named twice; give each file once")
        seen.add(str(target))
    for item in args.files:
        if item.expected_version is not None:
            expect_version(ctx.fs, item.path, item.expected_version)
    snapshot = ctx.fs.snapshot(target for target, _ in prepared)
    done = []
    try:
        for target, data in prepared:
            ctx.check_cancelled()
            done.append((target, data, ctx.fs.write_atomic(target, data)))
    except BaseException as exc:
        snapshot.restore()
        if isinstance(exc, ToolError) and done:
            raise ToolError(exc.code, f"{exc.message}. The {len(done)} file(s) written before it were put back; nothing was changed", exc.details) from None
        raise
    snapshot.discard()
    lines = [_wrote(target, data, created) for target, data, created in done]
    facts = [{"path": str(target), "bytesWritten": len(data), "created": created} for target, data, created in done]
    return ToolResult.text("\n".join(lines), {"files": facts})


def _prepared(args: WriteFileInput, ctx: ToolContext) -> tuple[ResolvedPath, bytes]:
    data = _decode_base64(args.content) if args.encoding == "base64" else _utf8(args.content)
    if args.line_count is not None and (lines := line_count(data)) != args.line_count:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{args.path}: content holds {lines} line(s), not the lineCount {args.line_count} given; nothing was written. "
            "It may have been cut short: send the whole content again",
            {"lineCount": lines},
        )
    _refuse_directory_syntax(args.path)
    return ctx.fs.resolve(args.path, Access.WRITE), data


def line_count(data: bytes) -> int:
    """Newlines, plus one for a last line without one: "a\nb" and "a\nb\n" both hold 2, "" none."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _wrote(target: ResolvedPath, data: bytes, created: bool) -> str:
    return f"Successfully wrote {_bytes(len(data))} to {target} ({'created' if created else 'replaced'})"


def append_file(args: AppendFileInput, ctx: ToolContext) -> ToolResult:
    text = args.content
    if args.ensure_newline and text and not text.endswith("\n"):
        text += "\r\n" if "\r\n" in text else "\n"
    data = _utf8(text)
    _refuse_directory_syntax(args.path)
    target = ctx.fs.resolve(args.path, Access.WRITE)
    created = args.create and ctx.fs.kind(target) is None
    try:
        size = ctx.fs.append(target, data, create=args.create)
    except ToolError as exc:
        if exc.code is ErrorCode.NOT_FOUND and not args.create:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"{target} does not exist; append_file only adds to an existing file. "
                "Pass create: true to create it, or check the path",
                exc.details,
            ) from None
        raise
    how = "created; " if created else ""
    return ToolResult.text(
        f"Successfully appended {_bytes(len(data))} to {target} ({how}now {_bytes(size)})",
        {"path": str(target), "bytesAppended": len(data), "size": size, "created": created},
    )


def _refuse_directory_syntax(raw: str) -> None:
    # The policy drops a trailing slash; without this check "notes/" would become a file "notes".
    if raw.endswith("/") and raw.strip("/"):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{raw!r} ends with '/', which names a directory; give the path of the file, including its name",
        )


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        # JSON can carry a lone surrogate ("\ud800") that no UTF-8 file can hold.
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"content holds a character UTF-8 cannot encode at position {exc.start} (a lone surrogate); "
            "send valid Unicode text, or the bytes with encoding: base64",
        ) from None


def _decode_base64(content: str) -> bytes:
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


def _bytes(n: int) -> str:
    return "1 byte" if n == 1 else f"{n} bytes"
