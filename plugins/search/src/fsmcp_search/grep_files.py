"""grep_files: ripgrep's JSON stream collected into grep-style lines, capped and budgeted."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from fsmcp import ToolContext, shown_name

from . import ripgrep, scope
from .ecmascript import to_ripgrep
from .models import MAX_RESULTS, GrepFilesInput
from .output import no_matches, skipped_note

LINE_LIMIT = 500
"""Characters of one line shown; a longer line is cut around its first match."""
_NARROW = "narrow it with directory, globs or a more specific regex"


@dataclass
class Line:
    number: int
    is_match: bool
    text: str
    column: int = 0
    """Where the first match starts, in characters."""


@dataclass
class FileHits:
    path: str
    lines: list[Line] = field(default_factory=list)

    @property
    def matches(self) -> int:
        return sum(line.is_match for line in self.lines)

    def first(self, count: int, context: int) -> FileHits:
        """The first ``count`` matches with the context lines after the last of them."""
        kept: list[Line] = []
        seen = 0
        last = 0
        for line in self.lines:
            if seen == count and (line.is_match or line.number > last + context):
                break
            kept.append(line)
            if line.is_match:
                seen += 1
                last = line.number
        return FileHits(self.path, kept)


def _text(value: dict) -> str:
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", "replace")


def _path(value: dict) -> str:
    # A name that is not UTF-8 is held as os.fsdecode holds it, and shown by the host's rule.
    return value["text"] if "text" in value else os.fsdecode(base64.b64decode(value["bytes"]))


class Collector:
    """Reads ripgrep's JSON messages; a file counts once its end shows it was not binary."""

    def __init__(self, limit: int, selects: Callable[[str], bool]):
        self.limit = limit
        self._selects = selects
        self.files: list[FileHits] = []
        self.matches = 0
        self._current: FileHits | None = None
        self._seen: set[str] = set()  # a file named in globs can also turn up in a walk

    def feed(self, records: list[bytes]) -> bool:
        for record in records:
            message = json.loads(record)
            kind, data = message["type"], message["data"]
            if kind == "begin":
                self._current = FileHits(_path(data["path"]))
            elif kind in ("match", "context") and self._current is not None:
                self._current.lines.append(_line(data, kind == "match"))
            elif kind == "end" and self._current is not None:
                # A NUL byte anywhere ripgrep read makes the file binary: none of it is shown.
                path = self._current.path
                if data.get("binary_offset") is None and path not in self._seen and self._selects(path):
                    self._seen.add(path)
                    self.files.append(self._current)
                    self.matches += self._current.matches
                self._current = None
                if self.matches > self.limit:
                    return False
        return True

    def describe(self) -> str:
        return f"{self.matches:,} matching lines in {len(self.files):,} files so far"


def _line(data: dict, is_match: bool) -> Line:
    text = _text(data["lines"]).removesuffix("\n").removesuffix("\r")
    column = 0
    if is_match and data.get("submatches"):
        start = data["submatches"][0]["start"]
        column = len(text.encode("utf-8", "surrogatepass")[:start].decode("utf-8", "ignore"))
    return Line(data["line_number"], is_match, text, column)


def _shown(line: Line) -> str:
    if len(line.text) <= LINE_LIMIT:
        return line.text
    start = max(0, min(line.column - LINE_LIMIT // 5, len(line.text) - LINE_LIMIT))
    end = start + LINE_LIMIT
    return ("…" if start else "") + line.text[start:end] + (f"… [line of {len(line.text):,} characters cut]" if end < len(line.text) else "")


def render(files: list[FileHits], context: int) -> list[tuple[str, bool]]:
    """Output lines, each with whether it is a match line."""
    out: list[tuple[str, bool]] = []
    for hits in files:
        previous = None
        for line in hits.lines:
            if context and out and (previous is None or line.number > previous + 1):
                out.append(("--", False))
            mark = ":" if line.is_match else "-"
            out.append((f"{shown_name(hits.path)}{mark}{line.number}{mark}{_shown(line)}", line.is_match))
            previous = line.number
    return out


def _select(files: list[FileHits], limit: int, context: int) -> tuple[list[FileHits], bool]:
    kept: list[FileHits] = []
    total = 0
    for hits in files:
        if total + hits.matches > limit:
            if limit > total:
                kept.append(hits.first(limit - total, context))
            return kept, True
        kept.append(hits)
        total += hits.matches
    return kept, False


async def grep_files(args: GrepFilesInput, ctx: ToolContext) -> str:
    pattern = to_ripgrep(args.regex)
    where = await anyio.to_thread.run_sync(
        lambda: scope.build(
            ctx, directory_raw=args.directory, globs=args.globs, exclude_globs=args.exclude_globs, include_ignored=args.include_ignored
        )
    )
    flags = ["--json", "--no-messages", "--crlf", "--max-count", str(args.max_results + 1), "--context", str(args.context_lines)]
    if args.case_insensitive:
        flags.append("--ignore-case")

    async def search(where: scope.Scope) -> Collector:
        # ripgrep leaves protected files out; what it still finds (a case or Unicode spelling
        # its globs miss) is dropped here, whatever the file's content.
        collector = Collector(args.max_results, lambda path: where.selects(path) and not ctx.is_protected(path))
        if where.paths or where.files:
            async with ripgrep.progress(ctx, collector.describe), ripgrep.run(
                ctx, [*flags, "--regexp", pattern, *scope.protected_globs(ctx, where), *where.ripgrep_args()], cwd=where.anchor, stdin=where.ignore_rules
            ) as rg:
                finished = await ripgrep.drain(rg, b"\n", collector.feed)
                code, stderr = await rg.finish() if finished else (0, "")
            error = ripgrep.failure(code, stderr, f"regex {args.regex!r}")
            if error is not None:
                raise error
        return collector

    collector = await scope.guarded(ctx, where, search)
    kept, cut = _select(collector.files, args.max_results, args.context_lines)
    kept.sort(key=lambda f: f.path)
    return _compose(render(kept, args.context_lines), args, cut, where.skipped, ctx.budget)


def _compose(lines: list[tuple[str, bool]], args: GrepFilesInput, cut: bool, skipped: list[str], budget: int) -> str:
    total = sum(is_match for _, is_match in lines)
    if not total:
        return no_matches(skipped)
    notes = [skipped_note(skipped)] if skipped else []
    head = []
    if cut:
        more = f"raise maxResults (up to {MAX_RESULTS:,}) or " if args.max_results < MAX_RESULTS else ""
        head.append(f"[results truncated: more lines match than maxResults ({args.max_results}); {more}{_NARROW}]")
    room = budget - sum(len(n) + 1 for n in head + notes) - 200
    body: list[str] = []
    shown = 0
    used = 0
    for text, is_match in lines:
        used += len(text) + 1
        if used > room:
            head.append(
                f"[output truncated: {shown:,} of {total:,} matches fit the output budget of {budget:,} characters; "
                f"{_NARROW}{', or lower contextLines' if args.context_lines else ''}]"
            )
            break
        body.append(text)
        shown += is_match
    while body and body[-1] == "--":
        body.pop()
    return "\n".join([*head, *body, f"[{shown} matches]", *notes])
