"""One file's edit: read it, work out the new bytes and the diff, then (maybe) write them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from fsmcp import ErrorCode, ResolvedPath, ToolContext, ToolError, lines_withheld

from .diff import Diff, unified_diff
from .document import Document
from .engine import apply_edits
from .models import EditItem


@dataclass(frozen=True)
class Plan:
    target: ResolvedPath
    old: bytes | None
    """The bytes read, kept only when a rollback may need them."""
    new: str
    document: Document
    """How ``new`` goes back to bytes (its byte-order mark); its own text is dropped."""
    changed: bool
    edits: int
    replacements: int
    diff: Diff
    """Its text is empty for a protected file: the counts stay, no line of it is shown."""
    stamp: tuple[int, int, int]
    protected: bool

    def summary(self) -> str:
        return (
            f"{_count(self.edits, 'edit')}, {_count(self.replacements, 'replacement')}, "
            f"+{self.diff.added} -{self.diff.removed} lines"
        )

    def shown_diff(self) -> str:
        """The diff, or for a protected file the sentence saying why there is none."""
        return lines_withheld("The diff") + "." if self.protected else self.diff.text

    def data(self, written: bool) -> dict[str, object]:
        data: dict[str, object] = {
            "path": str(self.target),
            "changed": self.changed,
            "written": written,
            "edits": self.edits,
            "replacements": self.replacements,
            "linesAdded": self.diff.added,
            "linesRemoved": self.diff.removed,
            "diff": self.diff.text,
        }
        if self.protected:
            data["protected"] = True
        return data


def plan_edit(ctx: ToolContext, target: ResolvedPath, edits: Sequence[EditItem], *, keep_old: bool = False) -> Plan:
    """The edit worked out in memory. A big file is held as its text and the edited text,
    and briefly as its bytes; the new bytes are encoded piece by piece as they are written."""
    ctx.hold(target)  # from the stamp to the write: another change to it waits for this one
    stamp = _stamp(ctx, target)
    old: bytes | None = ctx.fs.read_bytes(target)
    document = Document.decode(old, target)
    if not keep_old:
        old = None
    # allow_write lets a protected file be changed, never read: no diff or hint shows its lines.
    protected = ctx.is_protected(target)
    outcome = apply_edits(document.text, edits, hints=not protected)
    diff = unified_diff(str(target), document.text, outcome.text, outcome.changes)
    if protected:
        diff = Diff("", diff.added, diff.removed)
    changed = outcome.text != document.text
    return Plan(target, old, outcome.text, replace(document, text=""), changed, len(edits), outcome.replacements, diff, stamp, protected)


def commit(ctx: ToolContext, plan: Plan) -> None:
    """Write the new bytes, unless the file changed on disk since it was read."""
    if _stamp(ctx, plan.target) != plan.stamp:
        raise ToolError(
            ErrorCode.EDIT_CONFLICT,
            f"{plan.target} changed on disk while it was being edited; nothing was written. Read it again and retry",
        )
    ctx.fs.write_atomic(plan.target, plan.document.chunks(plan.new), make_parents=False)


def _stamp(ctx: ToolContext, target: ResolvedPath) -> tuple[int, int, int]:
    st = ctx.fs.stat(target)
    return st.st_mtime_ns, st.st_size, st.st_ino


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
