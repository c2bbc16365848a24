"""What compress_files puts in the archive: the inputs, walked, with their member names.

An input path is stored under its own name, a directory with everything below it (``src``
becomes ``src/...``). A glob's matches are named by their path relative to the workspace,
or, outside it, relative to the glob's fixed leading directories. Everything is read through
``ctx.fs``: links are stored as links (never followed), and only when they point inside the
allowed directories; devices, pipes and sockets, and protected files (``.env``, keys: the
secrets policy), are skipped with a note.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path

from fsmcp import Access, Entry, ErrorCode, GlobFilter, ToolContext, ToolError, protected_note

from .progress import Progress

MAGIC = frozenset("*?[{")


@dataclass
class Item:
    name: str
    kind: str
    """file, directory or symlink."""
    path: str
    """The real path, to read it through ctx.fs."""
    size: int
    mode: int
    mtime: float
    target: str | None = None


@dataclass
class Inputs:
    items: list[Item] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    bytes: int = 0


def gather(ctx: ToolContext, patterns: list[str], output: Path, progress: Progress) -> Inputs:
    found = Inputs()
    names: dict[str, str] = {}

    def add(name: str, path: Path, entry_kind: str, target: str | None) -> bool:
        """Record one entry; False when it is skipped or was recorded before."""
        if path == output:
            found.skipped.append(f"{path}: the archive itself")
            return False
        if entry_kind == "other":
            found.skipped.append(f"{path}: not a regular file, directory or link")
            return False
        if ctx.is_protected(path):
            found.skipped.append(f"{path}: {protected_note('reads')}")
            return False
        if entry_kind == "symlink" and target is None:
            found.skipped.append(f"{path}: a link that leads outside the allowed directories")
            return False
        earlier = names.get(name)
        if earlier is not None:
            if earlier != str(path):
                raise ToolError(
                    ErrorCode.INVALID_PARAMS,
                    f"{earlier} and {path} would both be stored as {name!r}; compress their parent directory instead, "
                    "or make one archive for each",
                )
            return False
        names[name] = str(path)
        st = ctx.fs.stat(str(path), follow_links=False)
        size = st.st_size if entry_kind == "file" else 0
        found.items.append(Item(name, entry_kind, str(path), size, stat.S_IMODE(st.st_mode), st.st_mtime, target))
        found.bytes += size
        progress.add(members=1)
        return True

    def add_tree(name: str, entry: Entry) -> None:
        if add(name, entry.path, entry.kind, entry.target) and entry.kind == "directory":
            for rel, _, below in ctx.fs.walk(str(entry.path)):
                add(f"{name}/{rel}", below.path, below.kind, below.target)

    for pattern in patterns:
        if MAGIC & set(pattern) and not _exists(ctx, pattern):
            matches = _glob(ctx, pattern, progress)
            if not matches:
                raise ToolError(ErrorCode.NOT_FOUND, f"the glob {pattern!r} matches nothing; check it with glob_search")
            for name, entry in matches:
                add_tree(name, entry)
        else:
            add_tree(*_literal(ctx, pattern))
    return found


def _exists(ctx: ToolContext, raw: str) -> bool:
    try:
        return ctx.fs.kind(raw, follow_links=False) is not None
    except ToolError:
        return False


def _literal(ctx: ToolContext, raw: str) -> tuple[str, Entry]:
    p = ctx.fs.resolve(raw, Access.READ, follow_links=False)
    kind = ctx.fs.kind(p, follow_links=False)
    if kind is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"{raw!r} does not exist ({p}); check the path, or use a glob")
    target = ctx.fs.readlink(p) if kind == "symlink" else None
    if p.path == Path(p.path.anchor):
        raise ToolError(ErrorCode.INVALID_PARAMS, "the file system's root cannot be archived whole; name what is in it")
    return p.path.name, Entry(p.path.name, kind, None, p.path, None, target)


def _glob(ctx: ToolContext, pattern: str, progress: Progress) -> list[tuple[str, Entry]]:
    parts = pattern.split("/")
    magic_at = next(i for i, part in enumerate(parts) if MAGIC & set(part))
    base = ctx.fs.resolve("/".join(parts[:magic_at]) or ("/" if pattern.startswith("/") else "."), Access.READ)
    rest = "/".join(parts[magic_at:])
    # A leading "/" anchors the pattern to the walk's start: it matches whole relative paths.
    matcher = GlobFilter(["/" + rest])
    workspace = ctx.roots.workspace
    matches: list[tuple[str, Entry]] = []

    def take(rel: str, entry: Entry) -> bool:
        # A match is taken whole (a directory with everything in it), so the walk goes no deeper.
        progress.add()
        if not matcher.matches(rel):
            return False
        inside = entry.path.is_relative_to(workspace) and entry.path != workspace
        matches.append((str(entry.path.relative_to(workspace if inside else base.path)), entry))
        return True

    for _ in ctx.fs.walk(base, max_depth=None if "**" in rest else len(parts) - magic_at, prune=take):
        pass
    return matches
