"""compress_files: gather the inputs, then stream the archive into an atomic write."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from fsmcp import Access, ErrorCode, ToolContext, ToolError, ToolResult, truncate

from .formats import for_output
from .gather import gather
from .models import CompressInput
from .progress import Progress
from .text import count
from .writers import chunks


def compress_files(args: CompressInput, ctx: ToolContext) -> ToolResult:
    if args.output.endswith("/"):
        raise ToolError(ErrorCode.INVALID_PARAMS, f"the output {args.output!r} ends in '/'; name the archive file itself")
    output = ctx.fs.resolve(args.output, Access.WRITE)
    fmt = for_output(args.format, output.path.name)
    existing = ctx.fs.kind(output, follow_links=False)
    if existing == "directory":
        raise ToolError(ErrorCode.NOT_FILE, f"{output} is a directory; name the archive file itself (say {output}/archive.{fmt})")
    if existing is not None and not args.overwrite:
        raise ToolError(ErrorCode.ALREADY_EXISTS, f"{output} already exists; pass overwrite: true to replace it, or choose another output")
    progress = Progress(ctx, "collecting files")
    inputs = gather(ctx, args.paths, output.path, progress)
    progress.start("archiving", len(inputs.items) + inputs.bytes)
    notes: list[str] = []
    written = _Counted(chunks(fmt, inputs.items, lambda item: ctx.fs.open_read(item.path), progress, notes))
    created = ctx.fs.write_atomic(output, written, overwrite=args.overwrite, make_parents=True)
    progress.send()

    kinds = [item.kind for item in inputs.items]
    parts = [count(kinds.count("file"), "file"), count(kinds.count("directory"), "directory", "directories")]
    if "symlink" in kinds:
        parts.append(count(kinds.count("symlink"), "symlink"))
    head = (
        f"{'Created' if created else 'Replaced'} {output} ({fmt}, {written.size:,} bytes) from "
        f"{count(len(kinds), 'member')} ({inputs.bytes:,} bytes): {', '.join(parts)}"
    )
    lines = [head, *(f"skipped {s}" for s in inputs.skipped), *notes]
    text, _ = truncate("\n".join(lines), ctx.budget, "Compress fewer inputs at a time to see every note.")
    data = {
        "path": str(output),
        "format": fmt,
        "bytes": written.size,
        "members": len(kinds),
        "files": kinds.count("file"),
        "directories": kinds.count("directory"),
        "symlinks": kinds.count("symlink"),
        "bytesIn": inputs.bytes,
        "created": created,
        "skipped": inputs.skipped,
        "notes": notes,
    }
    return ToolResult.text(text, data)


class _Counted:
    def __init__(self, stream: Iterable[bytes]):
        self._stream = stream
        self.size = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            if chunk:
                self.size += len(chunk)
                yield chunk
