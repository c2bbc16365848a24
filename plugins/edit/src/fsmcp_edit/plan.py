"""One file's edit: read it, work out the new bytes and the diff, then (maybe) write them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fsmcp import ErrorCode, ResolvedPath, ToolContext, ToolError

from .diff import Diff, unified_diff
from .document import Document
from .engine import apply_edits
from .models import EditItem


@dataclass(frozen=True)
class Plan:
    target: ResolvedPath
    old: bytes
    new: bytes
    edits: int
    replacements: int
    diff: Diff
    stamp: tuple[int, int, int]

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def summary(self) -> str:
        return (
            f"{_count(self.edits, 'edit')}, {_count(self.replacements, 'replacement')}, "
            f"+{self.diff.added} -{self.diff.removed} lines"
        )

    def data(self, written: bool) -> dict[str, object]:
        return {
            "path": str(self.target),
            "changed": self.changed,
            "written": written,
            "edits": self.edits,
            "replacements": self.replacements,
            "linesAdded": self.diff.added,
            "linesRemoved": self.diff.removed,
            "diff": self.diff.text,
        }


def plan_edit(ctx: ToolContext, target: ResolvedPath, edits: Sequence[EditItem]) -> Plan:
    stamp = _stamp(ctx, target)
    old = ctx.fs.read_bytes(target)
    document = Document.decode(old, target)
    outcome = apply_edits(document.text, edits)
    new = document.encode(outcome.text)
    diff = unified_diff(str(target), document.text, outcome.text, outcome.changes)
    return Plan(target, old, new, len(edits), outcome.replacements, diff, stamp)


def commit(ctx: ToolContext, plan: Plan) -> None:
    """Write the new bytes, unless the file changed on disk since it was read."""
    if _stamp(ctx, plan.target) != plan.stamp:
        raise ToolError(
            ErrorCode.EDIT_CONFLICT,
            f"{plan.target} changed on disk while it was being edited; nothing was written. Read it again and retry",
        )
    ctx.fs.write_atomic(plan.target, plan.new, make_parents=False)


def _stamp(ctx: ToolContext, target: ResolvedPath) -> tuple[int, int, int]:
    st = ctx.fs.stat(target)
    return st.st_mtime_ns, st.st_size, st.st_ino


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
