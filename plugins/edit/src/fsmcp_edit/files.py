"""edit_files' ``paths``: literal paths, and globs expanded through the host's walk."""

from __future__ import annotations

from fsmcp import Access, ErrorCode, GlobFilter, ResolvedPath, ToolContext, ToolError

MAGIC = frozenset("*?[{")
MAX_FILES = 1000


def expand(ctx: ToolContext, patterns: list[str], access: Access) -> list[tuple[str, ResolvedPath | ToolError]]:
    """Each file once, in the order given: ``(path, resolved)``, or ``(path, error)`` for a
    literal path the policy refuses. A glob that matches nothing is NOT_FOUND for the call."""
    out: list[tuple[str, ResolvedPath | ToolError]] = []
    seen: set[str] = set()

    def add(raw: str, resolved: ResolvedPath | ToolError) -> None:
        key = str(resolved) if isinstance(resolved, ResolvedPath) else raw
        if key not in seen:
            seen.add(key)
            out.append((key, resolved))
        if len(out) > MAX_FILES:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"paths match more than {MAX_FILES} files; use narrower globs and call edit_files more than once")

    for pattern in patterns:
        if not MAGIC & set(pattern):
            try:
                add(pattern, ctx.fs.resolve(pattern, access))
            except ToolError as exc:
                add(pattern, exc)
            continue
        matched = _glob(ctx, pattern, access)
        if not matched:
            raise ToolError(ErrorCode.NOT_FOUND, f"the glob {pattern!r} matches no file; check it with glob_search")
        for raw, resolved in matched:
            add(raw, resolved)
    return out


def _glob(ctx: ToolContext, pattern: str, access: Access) -> list[tuple[str, ResolvedPath | ToolError]]:
    parts = pattern.split("/")
    magic_at = next(i for i, part in enumerate(parts) if MAGIC & set(part))
    base = "/".join(parts[:magic_at]) or ("/" if pattern.startswith("/") else ".")
    rest = "/".join(parts[magic_at:])
    # A leading "/" anchors the pattern to the walk's start: it matches whole relative paths.
    matcher = GlobFilter(["/" + rest])
    depth = None if "**" in rest else len(parts) - magic_at
    root = ctx.fs.resolve(base, Access.READ)
    found: list[tuple[str, ResolvedPath | ToolError]] = []
    for walked, (rel, _, entry) in enumerate(ctx.fs.walk(root, max_depth=depth), 1):
        if walked % 1000 == 0:
            ctx.check_cancelled()
            ctx.progress(walked, None, f"{walked:,} entries walked for {pattern}")
        if entry.kind == "file" and matcher.matches(rel):
            try:
                found.append((str(entry.path), ctx.fs.resolve(str(entry.path), access)))
            except ToolError as exc:
                found.append((str(entry.path), exc))
    return found
