"""directory_tree: compact JSON, filled breadth-first until the budget is spent.

Breadth-first means a cut tree still shows the top levels whole, which is what a reader needs
to choose where to look next; each directory whose children were left out says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsmcp import Access, ErrorCode, GlobFilter, Text, ToolError, ToolResult, json_text, shown_name


if TYPE_CHECKING:
    from fsmcp import Entry, ToolContext

    from .models import DirectoryTreeInput

NOTICE_ROOM = 500
COUNT_CAP = 100_000
"""Entries counted past the cut before the notice says "at least"."""
_TRUNCATED = len(',"truncated":true')
_CHILDREN = len(',"children":[]')


def _dumps(value: Any) -> str:
    return json_text(value, default=None)


def directory_tree(args: DirectoryTreeInput, ctx: ToolContext) -> ToolResult:
    path = ctx.fs.resolve(args.path, Access.READ)
    what = ctx.fs.kind(path)
    if what != "directory":
        if what is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"{path} does not exist; check the path (list_directory shows what is there)")
        raise ToolError(ErrorCode.NOT_DIRECTORY, f"{path} is not a directory; use get_file_info or read_file")
    root: dict[str, Any] = {"name": shown_name(path.path.name or str(path)), "type": "directory"}
    if args.depth == 0:
        return ToolResult([Text(_dumps(root))], root)
    root["children"] = []
    tree = _Filler(root, ctx.budget - NOTICE_ROOM)
    globs = GlobFilter(args.exclude_globs)
    prune = (lambda rel, entry: globs.matches(rel)) if globs else None
    for rel, depth, entry in ctx.fs.walk(path, max_depth=args.depth, prune=prune, breadth_first=True, sizes=False):
        tree.offer(rel, entry, expand=entry.kind == "directory" and (args.depth is None or depth < args.depth))
        if tree.seen % 1000 == 0:
            ctx.check_cancelled()
            ctx.progress(tree.seen, None, f"{tree.seen:,} entries walked")
        if tree.seen - tree.shown >= COUNT_CAP:
            tree.give_up()
            break
    parts = [Text(_dumps(root))]
    if tree.full:
        of = f"{tree.seen:,}" if tree.exact else f"at least {tree.seen:,}"
        parts.append(
            Text(
                f"[truncated: showed {tree.shown:,} of {of} entries (output budget {ctx.budget:,} characters); "
                'directories marked "truncated": true have more inside. Get the rest with directory_tree on one of '
                'those directories, a smaller depth, or excludeGlobs (e.g. "node_modules", "*.log")]'
            )
        )
    return ToolResult(parts, root)


class _Filler:
    """Adds walked entries to the tree while their JSON fits ``limit`` characters."""

    def __init__(self, root: dict[str, Any], limit: int):
        self.root = root
        self.limit = limit
        self.used = len(_dumps(root)) + _TRUNCATED
        self.dirs: dict[str, dict[str, Any]] = {"": root}
        self.seen = self.shown = 0
        self.full = False
        self.exact = True

    def offer(self, rel: str, entry: Entry, *, expand: bool) -> None:
        self.seen += 1
        parent = self.dirs.get(rel.rpartition("/")[0])
        if parent is None:
            return  # its parent was left out already
        if self.full:
            parent["truncated"] = True
            return
        node: dict[str, Any] = {"name": shown_name(entry.name), "type": entry.kind}
        cost = len(_dumps(node)) + 1 + (_CHILDREN + _TRUNCATED if expand else 0)
        if self.used + cost > self.limit:
            self.full = True
            parent["truncated"] = True
            return
        if expand:
            node["children"] = []
            self.dirs[rel] = node
        parent["children"].append(node)
        self.used += cost
        self.shown += 1

    def give_up(self) -> None:
        """Stop counting: directories never listed may hold more, so they say so."""
        self.exact = False
        for node in self.dirs.values():
            if not node["children"]:
                node["truncated"] = True
