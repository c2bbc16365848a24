"""read_file: a whole file, a line range, head, tail or a byte range; as text, bytes or a blob.

The content part holds exactly the selected text; what the reader should know besides (a cut,
a clamped range, replaced bytes) goes in a second part, so the content can be copied as is.
"""

from __future__ import annotations

import base64
import os
from typing import TYPE_CHECKING, BinaryIO

from fsmcp import Access, Blob, ErrorCode, Text, ToolError, ToolResult

from .content import binary_type, sample
from .reader import Selection, Taken, region, take

if TYPE_CHECKING:
    from fsmcp import ResolvedPath, ToolContext

    from .models import ReadFileInput

NOTE_ROOM = 800
"""Characters kept back from the budget for the notes part."""


def selection(args: ReadFileInput) -> Selection:
    """The selection the arguments ask for; INVALID_PARAMS when they contradict each other."""
    line_args = [n for n, v in (("startLine", args.start_line), ("endLine", args.end_line), ("head", args.head), ("tail", args.tail)) if v is not None]
    byte_args = [n for n, v in (("offset", args.offset), ("length", args.length)) if v is not None]
    if line_args and byte_args:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{', '.join(line_args)} (lines) and {', '.join(byte_args)} (bytes) cannot be combined; choose lines or bytes",
        )
    if args.head is not None and args.tail is not None:
        raise ToolError(ErrorCode.INVALID_PARAMS, "head and tail cannot be combined; give one, or use startLine/endLine")
    if (args.head is not None or args.tail is not None) and (args.start_line is not None or args.end_line is not None):
        which = "head" if args.head is not None else "tail"
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{which} cannot be combined with startLine/endLine; use one way to choose lines")
    if args.start_line is not None and args.end_line is not None and args.start_line > args.end_line:
        raise ToolError(ErrorCode.INVALID_PARAMS, f"startLine ({args.start_line}) is after endLine ({args.end_line}); give startLine <= endLine")
    if args.line_numbers and args.encoding in ("base64", "hex"):
        raise ToolError(ErrorCode.INVALID_PARAMS, f"lineNumbers applies to text; drop it or use encoding auto or utf-8 instead of {args.encoding}")
    if args.tail is not None:
        return Selection("tail", tail=args.tail)
    if byte_args:
        return Selection("bytes", offset=args.offset or 0, length=args.length)
    if args.head is not None:
        return Selection("lines", max_lines=args.head)
    start = args.start_line or 1
    if args.end_line is not None:
        return Selection("lines", start_line=start, max_lines=args.end_line - start + 1, end_line=args.end_line)
    return Selection("lines", start_line=start, whole=not line_args)


def read_file(args: ReadFileInput, ctx: ToolContext) -> ToolResult:
    sel = selection(args)
    path = ctx.fs.resolve(args.path, Access.READ)
    with ctx.fs.open_read(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if sel.whole and args.max_bytes is not None and size > args.max_bytes:
            raise ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{path} is {size:,} bytes, over maxBytes {args.max_bytes:,}; read a part of it "
                "(startLine/endLine, head, tail, or offset/length) or raise maxBytes",
                {"size": size, "maxBytes": args.max_bytes},
            )
        reader = FileReader(fh, path, size, sel, ctx.budget)
        if args.encoding == "auto":
            mime = binary_type(sample(fh), path.path.name)
            if mime is not None:
                return reader.blob(mime, ctx.fs.max_file_bytes)
        if args.encoding in ("base64", "hex"):
            return reader.encoded(args.encoding)
        return reader.text(args.line_numbers)


class FileReader:
    """One open file and one selection, rendered one of three ways."""

    def __init__(self, fh: BinaryIO, path: ResolvedPath, size: int, sel: Selection, budget: int):
        self.fh, self.path, self.size, self.sel = fh, path, size, sel
        self.output_budget = budget
        self.budget = max(budget - NOTE_ROOM, budget // 2)
        """Characters the content itself may take."""
        self.where = region(fh, sel, size)
        self.notes: list[str] = [self.where.note] if self.where.note else []

    # -- text -------------------------------------------------------------------------------

    def text(self, numbered: bool) -> ToolResult:
        sel = self.sel
        taken = take(self.fh, sel, self.where, self.size, budget=self.budget, text=True, numbered=numbered)
        if sel.kind == "tail":
            self._tail_notes(taken)
        elif taken.cut and sel.kind == "bytes":
            self._cut_bytes_note(taken, f"{len(taken.text):,} characters")
        elif taken.cut:
            self._cut_lines_note(taken, f"{len(taken.text):,} characters")
        elif taken.exhausted and sel.end_line is not None:
            self.notes.append(f"[note: the file has {taken.last_line} lines; endLine={sel.end_line} was clamped to {taken.last_line}]")
        if taken.invalid:
            self.notes.append(
                f"[note: {taken.invalid:,} byte(s) here are not valid UTF-8 and are shown as U+FFFD; "
                "read with encoding base64 or hex for the exact bytes]"
            )
        if self.size == 0:
            self.notes.append("[note: the file is empty]")
        return self._result(taken.text, taken, "utf-8")

    # -- base64 / hex -----------------------------------------------------------------------

    def encoded(self, encoding: str) -> ToolResult:
        limit = (self.budget // 4) * 3 if encoding == "base64" else self.budget // 2
        taken = take(self.fh, self.sel, self.where, self.size, budget=limit, text=False)
        if taken.cut:
            how = f"{encoding} of {len(taken.data):,} bytes"
            if self.sel.kind == "tail":
                self.notes.append(
                    f"[truncated: showed the last {len(taken.data):,} bytes ({how} fills the output budget); "
                    f"the lines asked for begin before offset={taken.start}: read them with offset/length and encoding={encoding}]"
                )
            elif self.sel.kind == "lines" and self.sel.max_lines is not None:
                self._cut_lines_note(taken, how, f", encoding={encoding}")
            else:
                self._cut_bytes_note(taken, how, f", encoding={encoding}")
        text = base64.b64encode(taken.data).decode("ascii") if encoding == "base64" else taken.data.hex()
        return self._result(text, taken, encoding)

    # -- binary -----------------------------------------------------------------------------

    def blob(self, mime: str, limit: int) -> ToolResult:
        if self.sel.whole and self.size > limit:
            self._too_large(self.size, limit)
        taken = take(self.fh, self.sel, self.where, self.size, budget=limit, text=False)
        if taken.cut:
            self._too_large(None, limit)
        what = f"{self.size:,} bytes" if self.sel.whole else f"bytes {taken.start}-{taken.end - 1} of {self.size:,}"
        caption = f"[binary file {self.path}: {mime}, {what}; encoding base64 or hex returns the bytes as text]"
        data = {"path": str(self.path), "mimeType": mime, "size": self.size, "start": taken.start, "end": taken.end}
        return ToolResult([Blob(taken.data, mime, self.path.path.as_uri()), Text(caption)], data)

    def _too_large(self, size: int | None, limit: int) -> None:
        what = f"{self.path} is {size:,} bytes" if size is not None else f"the part of {self.path} asked for is"
        raise ToolError(
            ErrorCode.FILE_TOO_LARGE,
            f"{what} over the {limit:,}-byte limit for binary content; "
            "read it in parts with offset and length and encoding base64",
            {"limit": limit},
        )

    # -- shared -----------------------------------------------------------------------------

    def _cut_lines_note(self, taken: Taken, shown: str, extra: str = "") -> None:
        sel = self.sel
        until = "" if sel.max_lines is None else f", endLine={sel.start_line + sel.max_lines - 1}"
        if taken.next_line is not None:
            self.notes.append(
                f"[truncated: showed lines {sel.start_line}-{taken.next_line - 1} ({shown}; output budget "
                f"{self.output_budget:,}); continue with startLine={taken.next_line}{until}{extra} (or offset={taken.end}{extra})]"
            )
        else:
            self.notes.append(
                f"[truncated: line {taken.last_line} is longer than the output budget; showed bytes "
                f"{taken.start}-{taken.end - 1} of {self.size:,}; continue with offset={taken.end}{extra}]"
            )

    def _cut_bytes_note(self, taken: Taken, shown: str, extra: str = "") -> None:
        stop = self.where.stop
        rest = "" if stop is None else f", length={min(stop, self.size) - taken.end}"
        self.notes.append(
            f"[truncated: showed bytes {taken.start}-{taken.end - 1} of {self.size:,} ({shown}; output budget "
            f"{self.output_budget:,}); continue with offset={taken.end}{rest}{extra}]"
        )

    def _tail_notes(self, taken: Taken) -> None:
        if not taken.cut:
            return
        budget = f"output budget {self.output_budget:,}"
        if taken.partial_last:
            self.notes.append(
                f"[truncated: the last line is longer than the {budget}; showed its end, bytes {taken.start}-{self.size - 1}; "
                f"read what comes before with offset and length]"
            )
        elif taken.first_line is not None:
            count = min(self.sel.tail - taken.lines, taken.first_line - 1)
            self.notes.append(
                f"[truncated: showed the last {taken.lines} lines ({budget}); the {count} lines before them: "
                f"read with startLine={taken.first_line - count}, endLine={taken.first_line - 1}]"
            )
        elif taken.earlier is not None:
            start, end, count = taken.earlier
            self.notes.append(
                f"[truncated: showed the last {taken.lines} lines ({budget}); the {count} lines before them: "
                f"read with offset={start}, length={end - start}]"
            )
        else:
            self.notes.append(
                f"[truncated: showed the last {taken.lines} lines ({budget}); the lines asked for begin further back "
                f"and end just before offset={taken.start}: read them with offset and length, or ask again with lineNumbers]"
            )

    def _result(self, text: str, taken: Taken, encoding: str) -> ToolResult:
        parts = [Text(text)] + ([Text("\n".join(self.notes))] if self.notes else [])
        data = {
            "path": str(self.path),
            "encoding": encoding,
            "content": text,
            "size": self.size,
            "start": taken.start,
            "end": taken.end,
            "truncated": taken.cut,
            "notes": self.notes,
        }
        if taken.first_line is not None and taken.lines:
            data["startLine"], data["endLine"] = taken.first_line, taken.last_line
        return ToolResult(parts, data)
