"""What a program wrote over its view (:class:`.view.ProgramView`), applied to the roots as its call's
one change: :func:`commit`.

The upper layer is read against the root beneath it: a whiteout (a character device 0/0) is a
deletion of what the root holds there, whole trees included; an opaque directory (the
``user.overlay.opaque`` attribute ``y``) replaces the root's directory; anything else is
created or, where the root has the same kind of thing, modified (a file copied up but left as
it was is skipped). A rename shows as a deletion and a creation, as does a change of kind.

Everything is applied through the file system's primitives (:mod:`fsmcp.paths.fs`), as
``write_file``, ``delete_file`` and the rest apply theirs: the path policy (nothing outside
the roots, nothing protected, nothing in a read-only root), the locks, the stale-write guard,
and the journal, which saves what each path held first, so that ``undo_change`` puts it back.
The upper layer is untrusted input: the program made it; only the two overlay markers are read
from it, by their exact names (the kernel stores a program's own ``user.overlay.*`` attributes
under other names).
"""

from __future__ import annotations

import difflib
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from ..api.errors import ErrorCode, ToolError
from ..paths.change import ORDER
from ..paths.roots import shown

if TYPE_CHECKING:
    from ..paths.fs import FileSystem
    from ..run.context import ToolContext
    from .view import Layer, ProgramView

OPAQUE = "user.overlay.opaque"
ORIGIN = "user.overlay.origin"
WHITEOUT = "user.overlay.whiteout"
CHUNK = 1 << 20
DIFFED = 1 << 20
"""The largest file a dry run's diff shows; past it, one line says the file changed."""
KEPT = ".program-"
"""Between a path and a number: where the program's version of a file changed meanwhile by someone else is kept."""


@dataclass(frozen=True)
class Step:
    """One thing the program did to one path of a root."""

    kind: str
    """``created``, ``modified`` or ``deleted``."""
    path: str
    """The path in the root."""
    upper: str | None
    """Its new content in the upper layer (None for a deletion)."""


@dataclass
class Outcome:
    """What a program changed, as :func:`commit` applied it (or, for a dry run, would have)."""

    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    """Paths changed by someone else while the program ran, left as they are now: each a sentence."""
    refused: list[str] = field(default_factory=list)
    """Paths the program wrote that no tool may (outside the roots, protected, read-only): each a sentence."""
    diff: str | None = None
    """For a dry run: a unified diff of the text files, within the budget."""


def steps(layer: Layer) -> Iterator[Step]:
    """What the program did over ``layer``: deletions before what replaces them, a directory
    created before what it holds. One directory at a time is held in memory."""
    yield from _walk(layer.upper, layer.root, opaque=False)


def _walk(upper: str, lower: str, opaque: bool) -> Iterator[Step]:
    names = sorted(os.listdir(upper))
    if opaque:
        for name in sorted(set(_names(lower)) - set(names)):
            yield Step("deleted", os.path.join(lower, name), None)
    for name in names:
        up, low = os.path.join(upper, name), os.path.join(lower, name)
        ust = os.lstat(up)
        lst = _lstat(low)
        if _whiteout(up, ust):
            if lst is not None:
                yield Step("deleted", low, None)
            continue
        if lst is None:
            yield Step("created", low, up)
        elif stat.S_ISDIR(ust.st_mode) and stat.S_ISDIR(lst.st_mode):
            if stat.S_IMODE(ust.st_mode) != stat.S_IMODE(lst.st_mode):
                yield Step("modified", low, up)
            yield from _walk(up, low, opaque=_opaque(up))
        elif stat.S_IFMT(ust.st_mode) != stat.S_IFMT(lst.st_mode) or (opaque and stat.S_ISDIR(ust.st_mode)):
            yield Step("deleted", low, None)
            yield Step("created", low, up)
        elif not _same(up, ust, low, lst):
            yield Step("modified", low, up)


def _within_created(step: Step) -> Iterator[Step]:
    """What a created directory holds, one step each (a whiteout in it hides nothing). A
    created directory is one step, applied whole by one rename where it can be
    (:meth:`fsmcp.paths.fs.FileSystem.bring`): this is for what cannot."""
    assert step.upper is not None
    for name in sorted(os.listdir(step.upper)):
        sub = os.path.join(step.upper, name)
        if not _whiteout(sub, os.lstat(sub)):
            yield Step("created", os.path.join(step.path, name), sub)


def _names(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _xattr(path: str, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def _whiteout(path: str, st: os.stat_result) -> bool:
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
        return True
    return stat.S_ISREG(st.st_mode) and st.st_size == 0 and _xattr(path, WHITEOUT) is not None


def _opaque(path: str) -> bool:
    return _xattr(path, OPAQUE) == b"y"


def _same(up: str, ust: os.stat_result, low: str, lst: os.stat_result) -> bool:
    """Whether a copied-up entry is still what the root holds (opened for writing and left so, times changed)."""
    if stat.S_IMODE(ust.st_mode) != stat.S_IMODE(lst.st_mode):
        return False
    if stat.S_ISLNK(ust.st_mode):
        return os.readlink(up) == os.readlink(low)
    if not stat.S_ISREG(ust.st_mode):
        return True
    return ust.st_size == lst.st_size and _same_bytes(up, low)


def _same_bytes(a: str, b: str) -> bool:
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            p, q = x.read(CHUNK), y.read(CHUNK)
            if p != q:
                return False
            if not p:
                return True


# -- applying ---------------------------------------------------------------------------------


async def commit(ctx: ToolContext, view: ProgramView, *, dry_run: bool = False, budget: int = 40_000) -> Outcome:
    """Apply what the program wrote over ``view`` to the roots, as ``ctx``'s call's change; with
    ``dry_run`` only say what that would be (and a diff of the text files, within ``budget``
    characters). Call once the program's ``wait()`` has returned: its namespace is gone.

    A path someone else changed while the program ran (its change time at or after
    ``view.mark``) is not overwritten nor deleted: it is a conflict, and a file's version by the
    program is kept beside it (``NAME.program-N``, part of the change). A path no tool may write
    is refused. Everything else is applied; a program that changed nothing changes nothing.
    """
    ORDER.ended(ctx)  # its program is gone: the commit's own changes need not wait for it
    return await anyio.to_thread.run_sync(_serially, ctx, view, dry_run, budget)


_ONE_AT_A_TIME = threading.Lock()


def _serially(ctx: ToolContext, view: ProgramView, dry_run: bool, budget: int) -> Outcome:
    # One commit at a time: two programs that changed one file each find it as it was when they
    # started; checked and applied together, the second would not see the first's write.
    with _ONE_AT_A_TIME:
        return _commit(ctx, view, dry_run, budget)


def _commit(ctx: ToolContext, view: ProgramView, dry_run: bool, budget: int) -> Outcome:
    outcome = Outcome()
    diffs: list[str] = []
    skipped: list[str] = []  # deleted or conflicting directories: what the program did beneath them stays undone
    before: dict[str, int] = {}
    for layer in view.layers:
        for step in steps(layer):
            ctx.check_cancelled()
            if any(step.path.startswith(top + "/") for top in skipped):
                continue
            if dry_run:
                getattr(outcome, step.kind).append(step.path)
                if step.kind == "deleted" and os.path.isdir(step.path) and not os.path.islink(step.path):
                    skipped.append(step.path)  # its entries go with it
                for each in _beneath(step):
                    if budget <= sum(map(len, diffs)):
                        break
                    diffs.append(_diff(ctx.fs, each))
                continue
            _apply(ctx.fs, step, view.mark, outcome, skipped, before)
    if dry_run:
        outcome.diff = _within("".join(diffs), budget)
    return outcome


def _beneath(step: Step) -> Iterator[Step]:
    """``step`` and, for a created directory, every step it holds: what a dry run's diff shows."""
    if step.upper is None:
        return
    yield step
    if step.kind == "created" and os.path.isdir(step.upper) and not os.path.islink(step.upper):
        for each in _within_created(step):
            yield from _beneath(each)


def _apply(fs: FileSystem, step: Step, mark: int, outcome: Outcome, skipped: list[str], before: dict[str, int]) -> None:
    """Apply ``step``; ``before`` keeps each directory's change time as the commit first met it
    (its own steps change it next)."""
    parent = os.path.dirname(step.path)
    if parent not in before:
        before[parent] = st.st_ctime_ns if (st := _lstat(parent)) is not None else 0
    now = _lstat(step.path)
    if step.kind != "created" or now is not None:
        changed = _changed_since(step.path, now, mark)
    else:
        changed = _gone_since(step, before[parent], mark)
    if changed is not None:
        kept = _keep(fs, step) if step.upper is not None and os.path.isfile(step.upper) and not os.path.islink(step.upper) else None
        outcome.conflicts.append(
            f"{shown(step.path)}: {changed} while the program ran, so the program's "
            + ("deletion was not applied" if step.kind == "deleted" else f"version is kept as {shown(kept)}" if kept else "version was not applied")
        )
        if now is not None and stat.S_ISDIR(now.st_mode):
            skipped.append(step.path)
        return
    try:
        if step.kind == "deleted":
            fs.remove(step.path, recursive=True)
            if now is not None and stat.S_ISDIR(now.st_mode):
                skipped.append(step.path)
        elif step.kind == "created":
            try:
                fs.bring(step.upper or "", step.path)
            except ToolError:
                if not os.path.isdir(step.upper or "") or os.path.islink(step.upper or ""):
                    raise
                # Something beneath may not come in: the directory, then what it holds, one by one.
                _place(fs, step)
                outcome.created.append(step.path)
                for each in _within_created(step):
                    _apply(fs, each, mark, outcome, skipped, before)
                return
        else:
            _place(fs, step)
    except ToolError as exc:
        outcome.refused.append(f"{shown(step.path)}: {exc.message}")
        return
    getattr(outcome, step.kind).append(step.path)


def _place(fs: FileSystem, step: Step) -> None:
    """Put the upper's entry at the root's path: a directory made (or its mode set), a link, a file written whole."""
    assert step.upper is not None
    st = os.lstat(step.upper)
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        if step.kind == "created":
            fs.mkdir(step.path, parents=False)
        fs.chmod(step.path, mode)
    elif stat.S_ISLNK(st.st_mode):
        if step.kind == "modified":
            fs.remove(step.path)
        fs.symlink(step.path, os.readlink(step.upper))
    elif stat.S_ISREG(st.st_mode):
        if step.kind == "modified" and _same_content(step.upper, step.path):
            fs.chmod(step.path, mode)  # only its mode changed: the journal keeps no second copy of the bytes
        else:
            fs.write_atomic(step.path, _chunks(step.upper), mode=mode, make_parents=False)
    else:
        raise ToolError(ErrorCode.INVALID_PARAMS, "a FIFO, socket or device the program made is not applied")


def _changed_since(path: str, now: os.stat_result | None, mark: int) -> str | None:
    """How someone else changed ``path`` (and, for a directory, what lies beneath) after ``mark``, or None."""
    if now is None:
        return "deleted"
    if now.st_ctime_ns >= mark:
        return "changed"
    if stat.S_ISDIR(now.st_mode):
        for top, dirs, files in os.walk(path):
            for name in dirs + files:
                st = _lstat(os.path.join(top, name))
                if st is not None and st.st_ctime_ns >= mark:
                    return f"changed beneath ({os.path.join(top, name)})"
    return None


def _gone_since(step: Step, parent: int, mark: int) -> str | None:
    """Whether a path the program created, where the root has nothing now, held something the
    program had copied up (the overlay's ``user.overlay.origin``, which no program can set) and
    that someone else removed meanwhile: its directory (``parent``, its change time before the
    commit) changed after ``mark``. A file the program renamed there carries the mark too: a false
    conflict only when someone else changed that directory meanwhile."""
    assert step.upper is not None
    return "deleted" if parent >= mark and _xattr(step.upper, ORIGIN) is not None else None


def _keep(fs: FileSystem, step: Step) -> str | None:
    """Write the program's version of a conflicting file beside it; where, or None when it cannot be."""
    n = 1
    while os.path.lexists(f"{step.path}{KEPT}{n}"):
        n += 1
    aside = f"{step.path}{KEPT}{n}"
    try:
        fs.write_atomic(aside, _chunks(step.upper or ""), overwrite=False, make_parents=False)
    except ToolError:
        return None
    return aside


def _same_content(upper: str, path: str) -> bool:
    """Whether the root's file at ``path`` holds the bytes of ``upper``."""
    st, now = os.stat(upper), os.lstat(path)
    return stat.S_ISREG(now.st_mode) and st.st_size == now.st_size and _same_bytes(upper, path)


def _chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def _diff(fs: FileSystem, step: Step) -> str:
    """A unified diff of a created or modified text file (a line saying so for anything else).
    The root's file is read through the path layer, as a tool reads it."""
    assert step.upper is not None
    if not os.path.isfile(step.upper) or os.path.islink(step.upper):
        return ""
    try:
        old = b"" if step.kind == "created" else fs.read_bytes(step.path, limit=DIFFED)
    except ToolError as exc:
        return f"{step.path}: not shown ({exc.message})\n"
    new = _read(step.upper)
    if old is None or new is None or b"\0" in old or b"\0" in new:
        return f"Binary file {step.path} {'created' if step.kind == 'created' else 'changed'}\n"
    try:
        a, b = old.decode().splitlines(keepends=True), new.decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return f"Binary file {step.path} {'created' if step.kind == 'created' else 'changed'}\n"
    before = "/dev/null" if step.kind == "created" else step.path
    lines = difflib.unified_diff(a, b, before, step.path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _read(path: str) -> bytes | None:
    """A file of the upper layer's bytes, or None past :data:`DIFFED` (too large to show)."""
    with open(path, "rb") as f:
        data = f.read(DIFFED + 1)
    return None if len(data) > DIFFED else data


def _within(text: str, budget: int) -> str | None:
    if not text:
        return None
    if len(text) <= budget:
        return text
    cut = text.rfind("\n", 0, budget) + 1 or budget
    more = text[cut:].count("\n+++ ")
    return text[:cut] + f"[diff cut to its first {cut:,} characters to fit the output budget; {more:,} more files' diffs left out]\n"
