"""edit_file: one file's edits, all or nothing, answered with a diff."""

from __future__ import annotations

from fsmcp import Access, ToolContext, ToolError, ToolResult, truncate

from .models import EditFileInput
from .plan import commit, plan_edit

CUT_WRITTEN = "The edit was applied in full; only this report was cut. read_file shows the result."
CUT_PREVIEW = "Nothing was written. Preview fewer edits or files at a time to see every diff."


def edit_file(args: EditFileInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path, Access.READ if args.dry_run else Access.WRITE)
    try:
        plan = plan_edit(ctx, target, args.edits)
    except ToolError as exc:
        raise ToolError(exc.code, f"{target} was not changed: {exc.message}", exc.details) from None
    written = plan.changed and not args.dry_run
    if written:
        commit(ctx, plan)
    if not plan.changed:
        text = "(no changes)" if args.dry_run else f"(no changes) {target}: the edits matched but leave the file as it was; nothing was written."
    else:
        head = f"Dry run (nothing written): {target} would get {plan.summary()}." if args.dry_run else f"Edited {target}: {plan.summary()}."
        text, _ = truncate(f"{head}\n{plan.shown_diff()}", ctx.budget, CUT_PREVIEW if args.dry_run else CUT_WRITTEN)
    return ToolResult.text(text, plan.data(written))
