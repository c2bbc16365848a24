"""Writing a worked-out patch, undoing what was written if a later write fails.

Each write is atomic on its own (the host's temp file and rename); across files, a journal of
what each step replaced lets a failure part-way put every earlier file back. Deletions go last,
so the steps most likely to fail (writes: space, permissions) come before the ones that are
hardest to undo. As git apply does, a directory a deletion leaves empty is removed too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError

if TYPE_CHECKING:
    from fsmcp import FileSystem, ResolvedPath

    from .plan import State

Undo = Callable[[], None]


def commit(fs: FileSystem, changed: list[State]) -> None:
    """Write every changed file, or none: on a failure, undo the steps already taken."""
    done: list[tuple[str, Undo]] = []
    try:
        for step in _steps(fs, changed):
            done.append(step())
    except (ToolError, OSError) as exc:
        raise _rolled_back(fs, exc, done) from None
    for s in changed:
        if s.after is None:
            _prune_empty_parents(fs, s.path)


def _steps(fs: FileSystem, changed: list[State]) -> list[Callable[[], tuple[str, Undo]]]:
    moved = {id(s.moved_from) for s in changed if _is_move(s)}
    first: list[Callable[[], tuple[str, Undo]]] = []
    last: list[Callable[[], tuple[str, Undo]]] = []
    for s in changed:
        if _is_move(s):
            first.append(lambda s=s: _rename(fs, s.moved_from, s))
            if s.after != s.moved_from.before:
                first.append(lambda s=s: _write(fs, s, s.moved_from.before))
        elif id(s) in moved:
            continue
        elif s.after is not None:
            first.append(lambda s=s: _write(fs, s, s.before))
        else:
            last.append(lambda s=s: _remove(fs, s))
    return first + last


def _is_move(s: State) -> bool:
    src = s.moved_from
    return src is not None and s.before is None and s.after is not None and src.after is None and src.before is not None


def _write(fs: FileSystem, s: State, prior: bytes | None) -> tuple[str, Undo]:
    if prior is not None:
        fs.write_atomic(s.path, s.after)
        return str(s.path), lambda: fs.write_atomic(s.path, prior)
    made = _missing_parents(fs, s.path)
    # A file the patch creates must still be absent: one that appeared meanwhile is not replaced.
    fs.write_atomic(s.path, s.after, overwrite=False)

    def undo() -> None:
        fs.remove(s.path)
        for directory in made:
            fs.remove(directory)

    return str(s.path), undo


def _remove(fs: FileSystem, s: State) -> tuple[str, Undo]:
    fs.remove(s.path)
    return str(s.path), lambda: fs.write_atomic(s.path, s.before, overwrite=False)


def _rename(fs: FileSystem, source: State, target: State) -> tuple[str, Undo]:
    fs.rename(source.path, target.path, overwrite=False)
    return str(source.path), lambda: fs.rename(target.path, source.path, overwrite=False)


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


def _rolled_back(fs: FileSystem, exc: Exception, done: list[tuple[str, Undo]]) -> ToolError:
    error = exc if isinstance(exc, ToolError) else ToolError(ErrorCode.INTERNAL_ERROR, f"a write failed: {exc}")
    stuck: list[str] = []
    for path, undo in reversed(done):
        try:
            undo()
        except (ToolError, OSError) as undo_exc:
            stuck.append(f"{path} ({undo_exc})")
    if stuck:
        return ToolError(
            ErrorCode.INTERNAL_ERROR,
            f"{error.message}. Writing the patch failed part-way and these files could not be put back: "
            f"{'; '.join(stuck)}. Check them before anything else",
            {"cause": error.code.value, "not_restored": stuck},
        )
    restored = f"the {len(done)} file change(s) already made were undone, so " if done else ""
    return ToolError(error.code, f"{error.message}. The patch was not applied: {restored}every file is as it was", error.details)
