"""list_directory: one line per entry, flat or recursive, capped by maxResults and the budget."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from fsmcp import Access, GlobFilter, ToolError, ToolResult, shown_name


if TYPE_CHECKING:
    from fsmcp import Entry, ResolvedPath, ToolContext

    from .models import ListDirectoryInput

NOTICE_ROOM = 400

_TAGS = {"file": "[FILE]", "directory": "[DIR]", "symlink": "[LINK]", "other": "[OTHER]"}


def entry_line(rel: str, entry: Entry, sizes: bool) -> str:
    line = f"{_TAGS[entry.kind]} {shown_name(rel)}"
    if entry.kind == "symlink" and entry.target is not None:
        line += f" -> {shown_name(entry.target)}"
    if sizes and entry.kind == "file" and entry.size is not None:
        line += f" ({entry.size} bytes)"
    return line


def list_directory(args: ListDirectoryInput, ctx: ToolContext) -> ToolResult:
    path = ctx.fs.resolve(args.path, Access.READ)
    globs = GlobFilter(args.exclude_globs)
    excluded = 0

    def prune(rel: str, entry: Entry) -> bool:
        nonlocal excluded
        if globs and globs.matches(rel):
            excluded += 1
            return True
        return False

    unreadable: list[str] = []
    walk = _Preorder(ctx, path, prune, unreadable) if args.recursive else None
    entries = iter(walk) if walk is not None else ((e.name, e) for e in ctx.fs.list_dir(path) if not prune(e.name, e))

    limit = ctx.budget - NOTICE_ROOM
    lines: list[str] = []
    facts: list[dict[str, Any]] = []
    used = total = 0
    why: str | None = None
    for rel, entry in entries:
        total += 1
        if total % 1000 == 0:
            ctx.check_cancelled()
            ctx.progress(total, None, f"{total:,} entries listed")
        if why is None:
            line = entry_line(rel, entry, args.sizes)
            if len(lines) >= args.max_results:
                why = f"maxResults {args.max_results}"
            elif used + len(line) + 1 > limit:
                why = f"output budget {ctx.budget:,} characters"
            else:
                lines.append(line)
                facts.append(_fact(rel, entry))
                used += len(line) + 1
                continue
            if walk is not None:
                # Past the cut, only the directories already read are counted: a capped
                # listing of a huge tree costs what it shows, and the count says "at least".
                walk.descend = False
    complete = walk is None or not walk.unentered

    data = {"path": str(path), "entries": facts, "truncated": why is not None, "total": total, "totalIsExact": complete}
    if not lines:
        if excluded:
            return ToolResult.text(f"(no entries left: {excluded} excluded by excludeGlobs)", data)
        return ToolResult.text("(empty directory)", data)
    text = "\n".join(lines)
    if why is not None:
        left = total - len(lines)
        of = f"{total:,}" if complete else f"at least {total:,}"
        hints = ["list a subdirectory", "add excludeGlobs (e.g. \"node_modules\")"]
        if args.recursive:
            hints.append("drop recursive")
        if why.startswith("maxResults"):
            hints.append("raise maxResults")
        text += (
            f"\n[truncated: showed {len(lines):,} of {of} entries ({why}); {'at least ' if not complete else ''}{left:,} left out. "
            f"To see the rest: {', '.join(hints[:-1])} or {hints[-1]}]"
        )
    if unreadable:
        text += f"\n[note: {len(unreadable)} directories could not be read (permission denied) and are listed without their contents]"
    return ToolResult.text(text, data)


class _Preorder:
    """Every entry below ``top``, each directory followed by its contents, as ``find`` lists them.

    Linked directories are listed, never entered; each directory is resolved afresh, so the
    path policy sees every one of them. Once ``descend`` is False, the directories already
    read are finished and no other is entered; ``unentered`` counts those left unread.
    """

    def __init__(self, ctx: ToolContext, top: ResolvedPath, prune: Callable[[str, Entry], bool], unreadable: list[str]):
        self.ctx, self.top, self.prune, self.unreadable = ctx, top, prune, unreadable
        self.descend = True
        self.unentered = 0

    def __iter__(self) -> Iterator[tuple[str, Entry]]:
        stack: list[tuple[str, Iterator[Entry]]] = [("", iter(self.ctx.fs.list_dir(self.top)))]
        while stack:
            prefix, level = stack[-1]
            entry = next(level, None)
            if entry is None:
                stack.pop()
                continue
            rel = prefix + entry.name
            if self.prune(rel, entry):
                continue
            yield rel, entry
            if entry.kind != "directory":
                continue
            if not self.descend:
                self.unentered += 1
                continue
            try:
                below = self.ctx.fs.list_dir(str(entry.path))
            except ToolError:
                self.unreadable.append(rel)
                continue
            stack.append((rel + "/", iter(below)))


def _fact(rel: str, entry: Entry) -> dict[str, Any]:
    fact: dict[str, Any] = {"path": shown_name(rel), "type": entry.kind}
    if entry.size is not None:
        fact["size"] = entry.size
    if entry.target is not None:
        fact["target"] = shown_name(entry.target)
    return fact
