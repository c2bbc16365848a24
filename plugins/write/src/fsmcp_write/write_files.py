"""write_files: several files, every one or none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError, ToolResult, expect_version

from .content import prepare, wrote

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import WriteFilesInput


def write_files(args: WriteFilesInput, ctx: ToolContext) -> ToolResult:
    """Every file or none: all are checked first, then written; a failure puts back those written."""
    prepared = [prepare(item, ctx) for item in args.files]
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
        try:
            snapshot.restore()
        except OSError as failed:
            if not isinstance(exc, ToolError):
                raise
            # The call's own failure first: the rollback's only says what it could not do after it.
            raise ToolError(exc.code, f"{exc.message}. Putting back the {len(done)} file(s) written before it failed too: {failed.strerror or failed}", exc.details) from None
        if isinstance(exc, ToolError) and done:
            if snapshot.kept:
                raise ToolError(exc.code, f"{exc.message}. The {len(done)} file(s) written before it were put back, {snapshot.kept_note()}", exc.details) from None
            raise ToolError(exc.code, f"{exc.message}. The {len(done)} file(s) written before it were put back; nothing was changed", exc.details) from None
        raise
    snapshot.discard()
    lines = [wrote(target, data, created) for target, data, created in done]
    facts = [{"path": str(target), "bytesWritten": len(data), "created": created} for target, data, created in done]
    return ToolResult.text("\n".join(lines), {"files": facts})
