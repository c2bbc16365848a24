"""read_multiple_files: several files in one call, each in its own part, failures inline.

The budget is shared fairly: small files get all they need and the rest is split evenly
among the large ones, each of which says where to continue with read_file.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from fsmcp import Access, ErrorCode, Text, ToolError, ToolResult, fair_shares

from .content import binary_type, sample
from .reader import take_text

if TYPE_CHECKING:
    from fsmcp import ResolvedPath, ToolContext

    from .models import ReadMultipleInput

NOTICE_ROOM = 400
"""Characters a file's truncation or U+FFFD notice may take."""


def read_multiple_files(args: ReadMultipleInput, ctx: ToolContext) -> ToolResult:
    parts: list[Text] = []
    data: list[dict[str, Any]] = []
    # Every file is held open until the end (at most 50): the shares need all the sizes before the first read.
    with ExitStack() as held:
        opened = [_open(ctx, raw, held) for raw in args.paths]
        needs = [len(raw) + 2 + (len(_error(file)[0]) if isinstance(file, ToolError) else file.size + NOTICE_ROOM) for raw, file in zip(args.paths, opened)]
        shares = fair_shares(needs, ctx.budget)
        for raw, file, need, share in zip(args.paths, opened, needs, shares):
            ctx.check_cancelled()
            try:
                if isinstance(file, ToolError):
                    raise file
                body, facts = _read_one(file, share - len(raw) - 2, truncated=share < need)
            except ToolError as exc:
                body, facts = _error(exc)
            except OSError as exc:
                body, facts = _error(_failed(exc))
            parts.append(Text(f"{raw}:\n{body}"))
            data.append({"path": raw, **facts})
    return ToolResult(parts, {"files": data})


class Opened(NamedTuple):
    path: ResolvedPath
    fh: BinaryIO
    size: int
    """In bytes, which bounds the file's characters."""


def _open(ctx: ToolContext, raw: str, held: ExitStack) -> Opened | ToolError:
    """The file opened once, for both its size and its read, so that the walk to it is made once; or why it cannot be read."""
    try:
        path = ctx.fs.resolve(raw, Access.READ)
        fh = held.enter_context(ctx.fs.open_read(path))
    except ToolError as exc:
        return exc
    except OSError as exc:
        return _failed(exc)
    size = os.fstat(fh.fileno()).st_size
    return Opened(path, fh, size)


def _failed(exc: OSError) -> ToolError:
    return ToolError(ErrorCode.INTERNAL_ERROR, f"reading failed: {exc.strerror or exc}")


def _error(exc: ToolError) -> tuple[str, dict[str, Any]]:
    return f"[error: {exc.code.value} {exc.message}]", {"error": {"code": exc.code.value, "message": exc.message}}


def _read_one(file: Opened, room: int, *, truncated: bool) -> tuple[str, dict[str, Any]]:
    fh = file.fh
    mime = binary_type(sample(fh), file.path.path.name)
    if mime is not None:
        size = fh.seek(0, 2)
        line = f"[binary file: {mime}, {size:,} bytes; read it with read_file, which returns it as an image or blob (or as text with encoding base64)]"
        return line, {"binary": True, "mimeType": mime, "size": size}
    budget = max(room - NOTICE_ROOM, 0) if truncated else room
    taken = take_text(fh, start=0, budget=budget, first_line=1)
    notices = []
    if taken.cut and taken.next_line is not None:
        notices.append(
            f"[truncated: showed lines 1-{taken.next_line - 1} ({len(taken.text):,} characters, this file's share of the "
            f"output budget); read the rest with read_file startLine={taken.next_line} (or offset={taken.end})]"
        )
    elif taken.cut:
        notices.append(
            f"[truncated: line {taken.last_line} is longer than this file's share of the output budget; "
            f"read the rest with read_file offset={taken.end}]"
        )
    if taken.invalid:
        notices.append(f"[note: {taken.invalid:,} byte(s) are not valid UTF-8 and are shown as U+FFFD; read_file with encoding base64 gives the exact bytes]")
    body = taken.text
    if notices:
        body += ("" if not body or body.endswith("\n") else "\n") + "\n".join(notices)
    return body, {"content": taken.text, "truncated": taken.cut}
