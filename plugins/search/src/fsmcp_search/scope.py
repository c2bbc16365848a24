"""Which files a search covers: the directories ripgrep walks, the globs, the ignore rules.

Every directory handed to ripgrep was resolved through ``ctx.fs``, so it lies inside a root;
ripgrep never follows a symlink below it, and reads no ignore file above it: the
``.gitignore`` files between the root and the searched directory are read here, through
``ctx.fs``, and passed on with their patterns anchored to where they were found.

An ignore file that is not a regular file (a FIFO named ``.gitignore``) would block ripgrep's
open for ever: ``guarded`` looks for one when ripgrep runs long, and if there is one, stops it and
searches again with ripgrep reading no ignore file of its own, the regular ones handed to it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from fsmcp import Access, ErrorCode, ToolContext, ToolError

from .globs import Excludes, Include, has_magic

# In the order git weighs them: a later rule wins, and .gitignore outweighs .git/info/exclude.
_IGNORE_FILES = (".git/info/exclude", ".gitignore")
_T = TypeVar("_T")
_LOOK_AFTER = 2.0
"""Seconds a search runs before the look for special ignore files starts: shorter ones pay nothing."""
_IGNORE_FILE_LIMIT = 1 << 20


@dataclass
class Scope:
    anchor: str
    """The directory relative globs and excludes are anchored to; ripgrep's working directory."""
    paths: list[str]
    """Directories for ripgrep to walk, none inside another."""
    includes: list[Include] | None
    excludes: Excludes
    include_ignored: bool
    files: list[str] = field(default_factory=list)
    """Files named by a glob without wildcards: searched even where an ignore rule covers them."""
    skipped: list[str] = field(default_factory=list)
    """Globs that lead outside the allowed directories, as given."""
    ignore_rules: str = ""
    own_rules_only: bool = False
    """ripgrep reads no ignore file itself: every rule is in ``ignore_rules``."""

    def selects(self, path: str) -> bool:
        if self.includes is not None and path not in self.files and not any(i.matches(path) for i in self.includes):
            return False
        return not self.excludes.excludes(path)

    def ripgrep_args(self) -> list[str]:
        """The walk: what to skip, what to pre-filter, and the directories, last."""
        args = ["--no-config", "--hidden", "--no-follow", "--no-ignore-global", "--no-ignore-parent", "--no-ignore-dot", "--no-require-git"]
        if self.include_ignored:
            args.append("--no-ignore")
        else:
            args += ["--glob", "!.git"]
            if self.own_rules_only:
                args.append("--no-ignore-vcs")
            if self.ignore_rules:
                args += ["--ignore-file", "/dev/stdin"]
        if self.includes:
            names = [i.name_glob() for i in self.includes]
            if all(names):
                for name in dict.fromkeys(names):
                    args += ["--type-add", f"fsmcp:{name}"]
                args += ["--type", "fsmcp"]
            depth = self._max_depth()
            if depth is not None:
                args += ["--max-depth", str(depth)]
        inside = all(p == self.anchor or p.startswith(self.anchor.rstrip("/") + "/") for p in self.paths)
        for glob in self.excludes.ripgrep_globs(paths_inside_anchor=inside):
            args += ["--glob", glob]
        return [*args, "--", *self.paths, *self.files]

    def _max_depth(self) -> int | None:
        deepest = 0
        for include in self.includes or []:
            depth = include.depth()
            if depth is None:
                return None
            walked = next((p for p in self.paths if include.base == p or include.base.startswith(p.rstrip("/") + "/")), None)
            if walked is None:
                return None
            deepest = max(deepest, depth + len(Path(include.base).relative_to(walked).parts))
        return deepest


def protected_globs(ctx: ToolContext, scope: Scope) -> list[str]:
    """ripgrep's exclusions for the protected files of every root the search reaches."""
    args: list[str] = []
    for root in dict.fromkeys(ctx.roots.operator_root(Path(p)) for p in [*scope.paths, *scope.files]):
        if root is not None:
            args += ctx.protected(root).rg_globs()
    return args


def directory(ctx: ToolContext, raw: str) -> str:
    """``raw`` resolved to a directory inside the roots, as a string."""
    resolved = ctx.fs.resolve(raw, Access.READ)
    kind = ctx.fs.kind(resolved)
    if kind is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"{raw!r} does not exist; check the path (list_allowed_directories shows the roots)")
    if kind != "directory":
        raise ToolError(ErrorCode.NOT_DIRECTORY, f"{resolved} is a file, not a directory; pass the directory it is in, and its name in globs")
    return str(resolved.path)


def build(
    ctx: ToolContext,
    *,
    directory_raw: str | None,
    globs: list[str] | None,
    exclude_globs: list[str],
    include_ignored: bool,
) -> Scope:
    anchor = directory(ctx, directory_raw if directory_raw is not None else str(ctx.roots.workspace))
    scope = Scope(anchor, [anchor], None, Excludes(exclude_globs, anchor), include_ignored)
    if globs:
        scope.includes, scope.paths = [], []
        for raw in globs:
            _add_glob(ctx, scope, raw)
        scope.paths = _outermost(scope.paths)
    if not include_ignored:
        scope.ignore_rules = _ancestor_rules(ctx, scope.paths)
    return scope


def _add_glob(ctx: ToolContext, scope: Scope, raw: str) -> None:
    glob = os.path.expanduser(raw.strip())
    if not glob:
        raise ToolError(ErrorCode.INVALID_PARAMS, "a glob is empty; give patterns such as **/*.py")
    if not glob.startswith("/"):
        while glob.startswith("./"):
            glob = glob[2:]
        # Anchored to the directory: *.txt is the directory's own, **/*.txt any depth.
        glob = scope.anchor.rstrip("/") + "/" + glob
    if not has_magic(glob):
        kind = _named(ctx, scope, raw, glob)
        if kind != "directory":
            return
        glob = glob.rstrip("/") + "/"
    if glob.endswith("/"):
        glob += "**"  # a directory stands for everything in it
    parts = glob.split("/")
    literal = 1
    while literal < len(parts) - 1 and not has_magic(parts[literal]):
        literal += 1
    base_raw = "/".join(parts[:literal]) or "/"
    pattern = "/".join(parts[literal:])
    try:
        base = ctx.fs.resolve(base_raw, Access.READ)
    except ToolError as exc:
        if exc.code is not ErrorCode.ACCESS_DENIED:
            raise
        # A glob above the roots (/srv/**/*.py with a root /srv/app) still reaches into them.
        lexical = os.path.normpath(base_raw)
        inner = _roots_below(ctx, base_raw)
        if not inner:
            scope.skipped.append(raw)
            return
        scope.includes.append(Include(lexical, pattern))
        scope.paths += inner
        return
    if ctx.fs.kind(base) != "directory":
        return  # nothing there, so nothing matches
    scope.includes.append(Include(str(base.path), pattern))
    scope.paths.append(str(base.path))


def _named(ctx: ToolContext, scope: Scope, raw: str, path: str) -> str | None:
    """A glob without wildcards names a file, searched as named, or a directory. Its kind."""
    try:
        resolved = ctx.fs.resolve(path, Access.READ)
    except ToolError as exc:
        if exc.code is not ErrorCode.ACCESS_DENIED or ctx.is_protected(os.path.normpath(path)):
            raise
        if _roots_below(ctx, path):
            return "directory"
        scope.skipped.append(raw)
        return None
    kind = ctx.fs.kind(resolved)
    if kind == "file" and str(resolved.path) not in scope.files:
        scope.files.append(str(resolved.path))
    return kind


def _roots_below(ctx: ToolContext, path: str) -> list[str]:
    lexical = os.path.normpath(path)
    return [str(r.path) for r in ctx.roots.usable if r.path.is_relative_to(lexical)]


def _outermost(paths: list[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def _ancestor_rules(ctx: ToolContext, paths: list[str]) -> str:
    """The ignore files of every directory from each path's root down to its parent, re-anchored."""
    above: set[Path] = set()
    for path in paths:
        here = Path(path)
        root = ctx.fs.resolve(path).root.path
        while here != root and here.is_relative_to(root):
            here = here.parent
            above.add(here)
    rules: list[str] = []
    for folder in sorted(above, key=lambda p: len(p.parts)):
        for name in _IGNORE_FILES:
            text = _read_small(ctx, folder / name)
            if text:
                rules += anchored_rules(text, str(folder))
    return "\n".join(rules) + "\n" if rules else ""


async def guarded(ctx: ToolContext, scope: Scope, search: Callable[[Scope], Awaitable[_T]]) -> _T:
    """``search(scope)``, and again without ripgrep's own ignore files when one is not a regular file."""
    if scope.include_ignored:
        return await search(scope)
    found: list[tuple[Path, str]] | None = None
    result = None
    try:
        async with anyio.create_task_group() as group:

            async def look() -> None:
                nonlocal found
                await anyio.sleep(_LOOK_AFTER)
                found = await anyio.to_thread.run_sync(_ignore_files_below, ctx, scope.paths, abandon_on_cancel=True)
                if found is not None:
                    group.cancel_scope.cancel()

            group.start_soon(look)
            result = await search(scope)
            group.cancel_scope.cancel()  # ripgrep finished, so it opened no special file that blocks
    except BaseExceptionGroup as failed:
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None  # the search's own error, as it raised it
        raise
    if found is None:
        return result
    rules = [scope.ignore_rules.rstrip("\n")] if scope.ignore_rules else []
    for folder, text in found:
        rules += anchored_rules(text, str(folder))
    own = replace(scope, own_rules_only=True, ignore_rules="\n".join(rules) + "\n" if rules else "")
    return await search(own)


def _ignore_files_below(ctx: ToolContext, paths: list[str]) -> list[tuple[Path, str]] | None:
    """None when every ignore file below ``paths`` is a regular file (or absent); else the regular
    ones' folders and texts, shallowest first. Only names and types are looked at until then."""
    special = False
    regular: list[tuple[int, int, Path, Path]] = []
    for top in paths:
        base = Path(top)
        found: list[tuple[int, Path, str | None]] = []
        try:
            for rel, _, entry in ctx.fs.walk(top, prune=_inside_git):
                folder = (base / rel).parent
                if entry.name == ".gitignore":
                    found.append((1, folder / ".gitignore", entry.kind))
                elif entry.name == ".git" and entry.kind == "directory":
                    exclude = folder / ".git/info/exclude"
                    found.append((0, exclude, _kind(ctx, exclude)))
        except ToolError:
            continue
        for order, path, kind in found:
            if kind == "file":
                folder = path.parent if order else path.parent.parent.parent
                regular.append((len(folder.parts), order, folder, path))
            elif kind is not None:
                special = True  # ripgrep would open a link's target, perhaps a FIFO
    if not special:
        return None
    out = []
    for _, _, folder, path in sorted(regular, key=lambda r: (r[0], r[1], str(r[2]))):
        text = _read_small(ctx, path)
        if text:
            out.append((folder, text))
    return out


def _inside_git(rel: str, entry: object) -> bool:
    return "/.git/" in f"/{rel}"


def _kind(ctx: ToolContext, path: Path) -> str | None:
    try:
        return ctx.fs.kind(str(path), follow_links=False)
    except ToolError:
        return None


def _read_small(ctx: ToolContext, path: Path) -> str:
    try:
        if ctx.fs.kind(str(path)) != "file":
            return ""
        return ctx.fs.read_bytes(str(path), limit=_IGNORE_FILE_LIMIT).decode("utf-8", "replace")
    except ToolError:
        return ""  # unreadable, too large or a link out: it cannot narrow the search


def _escape(path: str) -> str:
    return "".join("\\" + c if c in "\\*?[]{}" else c for c in path)


def anchored_rules(text: str, folder: str) -> list[str]:
    """The ``.gitignore`` lines of ``folder`` rewritten to absolute patterns, same meaning."""
    base = _escape(folder.rstrip("/"))
    out = []
    for line in text.splitlines():
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "  # "\ " keeps a trailing space
        if not stripped or stripped.startswith("#"):
            continue
        negate = stripped.startswith("!")
        body = stripped[1:] if negate else stripped
        only_dirs = body.endswith("/")
        body = body.rstrip("/")
        if not body:
            continue
        anchored = f"{base}/{body.lstrip('/')}" if "/" in body else f"{base}/**/{body}"
        out.append(("!" if negate else "") + anchored + ("/" if only_dirs else ""))
    return out
