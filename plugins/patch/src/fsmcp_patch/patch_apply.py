"""patch_apply: a patch (a unified diff, an apply_patch text or SEARCH/REPLACE blocks) applied to
every file it names, whole or not at all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ToolResult, number_runs

from .commit import commit
from .formats import read
from .models import PatchApplyInput
from .plan import Plan, Report

if TYPE_CHECKING:
    from fsmcp import ToolContext

_VERBS = {
    "patch": ("patched", "would patch"),
    "create": ("created", "would create"),
    "delete": ("deleted", "would delete"),
    "rename": ("renamed", "would rename"),
    "copy": ("copied", "would copy"),
    "keep": ("unchanged", "would leave unchanged"),
}


def patch_apply(args: PatchApplyInput, ctx: ToolContext) -> ToolResult:
    fmt, sections = read(args.patch)
    plan = Plan(ctx, args.path, sections, fmt)
    plan.run()
    if not args.dry_run:
        commit(ctx, plan.changed())
    lines = [_line(r, args.dry_run, fmt.noun) for r in plan.reports]
    if args.dry_run:
        lines.insert(0, f"dry run: every {fmt.noun} applies; nothing was written.")
    data = {"dryRun": args.dry_run, "files": [_data(r) for r in plan.reports]}
    return ToolResult.text("\n".join(lines), data)


def _line(r: Report, dry: bool, noun: str) -> str:
    verb = _VERBS[r.action][dry]
    where = f"{r.source} -> {r.path}" if r.source else r.path
    details = []
    if r.action == "create":
        details.append("empty" if not r.lines else f"{r.lines} line{'s' * (r.lines != 1)}")
    elif r.hunks or r.action == "patch":
        details.append(f"{r.hunks} {noun}{'s' * (r.hunks != 1)}")
    details += _offsets(r.offsets)
    details += r.notes
    return f"{verb} {where}" + (f" ({', '.join(details)})" if details else "")


def _offsets(offsets: dict[int, int]) -> list[str]:
    by_offset: dict[int, list[int]] = {}
    for number, offset in offsets.items():
        by_offset.setdefault(offset, []).append(number)
    return [f"offset {offset:+d} on hunk{'s' * (len(numbers) > 1)} {number_runs(numbers)}" for offset, numbers in by_offset.items()]


def _data(r: Report) -> dict:
    out = {"action": r.action, "path": r.path, "hunks": r.hunks}
    if r.source:
        out["source"] = r.source
    if r.offsets:
        out["offsets"] = {str(k): v for k, v in r.offsets.items()}
    if r.lines is not None:
        out["lines"] = r.lines
    if r.notes:
        out["notes"] = r.notes
    return out
