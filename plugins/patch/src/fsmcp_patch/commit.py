"""Writing a worked-out patch, undoing what was written if a later write fails.

Each write is atomic on its own (the host's temp file and rename); across files, a journal of
what each step replaced lets a failure part-way put every earlier file back. Deletions go last,
so the steps most likely to fail (writes: space, permissions) come before the ones that are
hardest to undo. As git apply does, a directory a deletion leaves empty is removed too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError

if TYPE_CHECKING:
    from fsmcp import FileSystem, ResolvedPath, ToolContext

    from .plan import State

Undo = Callable[[], None]
Step = Callable[[], Undo]


@dataclass(frozen=True)
class _Planned:
    """One write of the patch: what it does to which file, for a message that says how far it got."""

    path: ResolvedPath
    did: str
    """What it does, as the message says it: ``patched``, ``created``, ``deleted``, ``renamed to X``."""
    step: Step


def commit(ctx: ToolContext, changed: list[State]) -> None:
    """Write every changed file, or none: on a failure, undo the steps already taken."""
    fs = ctx.fs
    planned = _steps(fs, changed)
    done: list[tuple[_Planned, Undo]] = []
    try:
        for p in planned:
            done.append((p, p.step()))
    except (ToolError, OSError) as exc:
        raise _rolled_back(ctx, exc, done, planned[len(done):]) from None
    for s in changed:
        if s.after is None:
            _prune_empty_parents(fs, s.path)


def _steps(fs: FileSystem, changed: list[State]) -> list[_Planned]:
    moved = {id(s.moved_from) for s in changed if _is_move(s)}
    first: list[_Planned] = []
    last: list[_Planned] = []
    for s in changed:
        if _is_move(s):
            first.append(_Planned(s.moved_from.path, f"renamed to {s.path.path.name}", lambda s=s: _rename(fs, s.moved_from, s)))
            if s.after != s.moved_from.before:
                first.append(_Planned(s.path, "patched", lambda s=s: _write(fs, s, s.moved_from.before)))
        elif id(s) in moved:
            continue
        elif s.after is not None:
            first.append(_Planned(s.path, "patched" if s.before is not None else "created", lambda s=s: _write(fs, s, s.before)))
        else:
            last.append(_Planned(s.path, "deleted", lambda s=s: _remove(fs, s)))
    return first + last


def _is_move(s: State) -> bool:
    src = s.moved_from
    return src is not None and s.before is None and s.after is not None and src.after is None and src.before is not None


def _write(fs: FileSystem, s: State, prior: bytes | None) -> Undo:
    if prior is not None:
        fs.write_atomic(s.path, s.after)
        return lambda: fs.write_atomic(s.path, prior)
    made = _missing_parents(fs, s.path)
    # A file the patch creates must still be absent: one that appeared meanwhile is not replaced.
    fs.write_atomic(s.path, s.after, overwrite=False)

    def undo() -> None:
        fs.remove(s.path)
        for directory in made:
            fs.remove(directory)

    return undo


def _remove(fs: FileSystem, s: State) -> Undo:
    fs.remove(s.path)
    return lambda: fs.write_atomic(s.path, s.before, overwrite=False)


def _rename(fs: FileSystem, source: State, target: State) -> Undo:
    fs.rename(source.path, target.path, overwrite=False)
    return lambda: fs.rename(target.path, source.path, overwrite=False)


def _missing_parents(fs: FileSystem, path: ResolvedPath) -> list[str]:
    """The directories writing ``path`` will create, deepest first."""
    missing = []
    parent = path.path.parent
    while fs.kind(str(parent)) is None:
        missing.append(str(parent))
        parent = parent.parent
    return missing


def _prune_empty_parents(fs: FileSystem, path: ResolvedPath) -> None:
    parent = path.path.parent
    try:
        while not fs.list_dir(str(parent)):
            fs.remove(str(parent))  # refused for a root, which ends the climb
            parent = parent.parent
    except ToolError:
        pass


def _rolled_back(ctx: ToolContext, exc: Exception, done: list[tuple[_Planned, Undo]], not_done: list[_Planned]) -> ToolError:
    error = exc if isinstance(exc, ToolError) else ToolError(ErrorCode.INTERNAL_ERROR, f"a write failed: {exc}")
    stuck: list[tuple[_Planned, Exception]] = []
    put_back: list[_Planned] = []
    for p, undo in reversed(done):
        try:
            undo()
            put_back.append(p)
        except (ToolError, OSError) as undo_exc:
            stuck.append((p, undo_exc))
    if not stuck:
        restored = f"the {len(done)} file change(s) already made were undone, so " if done else ""
        return ToolError(error.code, f"{error.message}. The patch was not applied: {restored}every file is as it was", error.details)
    # The patch stands in part: say of each file where it is, and how to get back to where it was.
    shown = _shown(ctx)
    parts = [f"{shown(p.path)} was {p.did} and could not be put back ({undo_exc})" for p, undo_exc in reversed(stuck)]
    if put_back:
        parts.append(f"put back as it was: {', '.join(shown(p.path) for p in reversed(put_back))}")
    if not_done:
        parts.append(f"{', '.join(shown(p.path) for p in not_done)} {'was' if len(not_done) == 1 else 'were'} not written")
    left = ", ".join(shown(p.path) for p, _ in reversed(stuck))
    if ctx.journal is None:
        todo = f"the change journal is off: put {left} back by hand (from version control or a copy) before anything else"
    elif "undo_change" in ctx.tools:
        todo = (
            "the change journal kept every file as it was before the patch: undo_change (with no id: this session's latest "
            f"change) puts them back; look at {left} first, and pass force: true if it changed since"
        )
    else:
        todo = f"the change journal kept every file as it was before the patch; put {left} back by hand, or have the operator enable undo_change"
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"{error.message}. The patch is applied in part: {'; '.join(parts)}. {todo[0].upper()}{todo[1:]}",
        {"cause": error.code.value, "not_restored": [str(p.path.path) for p, _ in reversed(stuck)]},
    )


def _shown(ctx: ToolContext) -> Callable[[ResolvedPath], str]:
    """A path as the patch's result names it: relative to the workspace, where it lies inside."""
    workspace = ctx.roots.workspace

    def shown(path: ResolvedPath) -> str:
        try:
            return str(path.path.relative_to(workspace))
        except ValueError:
            return str(path.path)

    return shown
