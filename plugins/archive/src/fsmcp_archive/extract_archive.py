"""extract_archive: check every member, stage them inside the destination, then move them in."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path

from fsmcp import Access, ErrorCode, ToolContext, ToolError, ToolResult, protected_note, shown_name, truncate

from .models import ExtractInput
from .options import Limits, raise_hint
from .placing import Plan, place, plan, set_directory_modes
from .progress import Progress
from .members import Member, Tally
from .readers import Reader, open_reader
from .safety import Judged, judge
from .text import count

STAGING_PREFIX = ".fsmcp-extract-"


def extract_archive(args: ExtractInput, ctx: ToolContext) -> ToolResult:
    kept: list[str] = []
    try:
        return _extract(args, ctx, kept)
    except ToolError as exc:
        raise ToolError(exc.code, f"{exc.message}; nothing was extracted{''.join(kept)}", exc.details) from None


def _extract(args: ExtractInput, ctx: ToolContext, kept: list[str]) -> ToolResult:
    limits = Limits.of(ctx.options)
    archive = ctx.fs.resolve(args.archive, Access.READ)
    dest = ctx.fs.resolve(args.destination, Access.WRITE)
    dest_kind = ctx.fs.kind(dest)
    if dest_kind not in (None, "directory"):
        raise ToolError(ErrorCode.NOT_DIRECTORY, f"{dest} is a file, not a directory; give a directory to extract into")
    label = str(archive)
    progress = Progress(ctx, "reading member headers")
    with ctx.fs.open_read(archive) as fh, open_reader(fh, label, ctx.fs.stat(archive).st_size, limits) as reader:
        members: list[Member] = []
        declared = 0
        for member in reader.members():
            members.append(member)
            declared += member.size
            # Before the next header is sought: in a tar that means reading past this member's data.
            if declared > limits.max_total_bytes:
                raise ToolError(
                    ErrorCode.FILE_TOO_LARGE,
                    f"{label} declares at least {declared:,} bytes of members, over the max_total_bytes limit of "
                    f"{limits.max_total_bytes:,} ({raise_hint('max_total_bytes')})",
                )
            progress.add(members=1)
        verdict = judge(members, limits, ctx.fs.max_file_bytes)
        problem = verdict.problem(label, limits)
        if problem is not None:
            raise problem
        judged, left_out = _unprotected(ctx, dest.path, verdict.judged)
        total = verdict.total - sum(j.size for j in left_out)
        target = plan(ctx, dest.path, dest_kind is not None, judged)
        target.check(args.overwrite)
        progress.start("extracting", len(members) + total)
        _carry_out(ctx, reader, target, judged, progress, Tally(limits, label), kept)
        progress.send()
    return _report(label, reader.format, target, judged, total, ctx.budget, left_out)


def _unprotected(ctx: ToolContext, dest: Path, judged: list[Judged]) -> tuple[list[Judged], list[Judged]]:
    """The members to write, and those left out: protected where they would land (``.env``, keys),
    or hard links to one of those."""
    kept: list[Judged] = []
    left_out: list[Judged] = []
    dropped: set[str] = set()
    for j in judged:
        if j.name and (ctx.is_protected(dest / j.name) or (j.member.kind == "hardlink" and j.source in dropped)):
            left_out.append(j)
            dropped.add(j.name)
        else:
            kept.append(j)
    return kept, left_out


def _carry_out(ctx: ToolContext, reader: Reader, target: Plan, judged: list[Judged], progress: Progress, tally: Tally, kept: list[str]) -> None:
    """All of it or, on any failure or cancellation, none: what the call changed is taken back
    (``kept`` gains the sentence naming what another call changed meanwhile, which stays)."""
    dest = target.dest
    # The snapshot saves each path as the extraction changes it and takes back only those
    # changes: a path someone else creates meanwhile, even in a directory made here, survives.
    snapshot = ctx.fs.snapshot([str(dest)])
    try:
        ctx.fs.mkdir(str(dest))
        staging = dest / f"{STAGING_PREFIX}{secrets.token_hex(6)}"
        ctx.fs.mkdir(str(staging), parents=False)
        _stage(ctx, reader, staging, judged, progress, tally)
        place(ctx, staging, target)
        set_directory_modes(ctx, target, judged)
        ctx.fs.remove(str(staging), recursive=True)
    except BaseException:
        snapshot.restore()
        if snapshot.kept:
            kept.append(", " + snapshot.kept_note())
        raise
    snapshot.discard()


def _stage(ctx: ToolContext, reader: Reader, staging: Path, judged: list[Judged], progress: Progress, tally: Tally) -> None:
    links: list[Judged] = []
    for j in judged:
        progress.add(members=1)
        kind = j.member.kind
        if not j.name:
            continue  # "./": the destination itself
        path = str(staging / j.name)
        if kind == "directory":
            ctx.fs.mkdir(path)
        elif kind == "file":
            mode = j.member.mode & 0o777 if j.member.mode is not None else None
            ctx.fs.write_atomic(path, _reported(reader.chunks(j.member, tally), progress), overwrite=False, mode=mode)
        elif kind == "hardlink":
            # The host has no hard-link primitive: the member becomes a copy of the file it names.
            ctx.fs.copy(str(staging / (j.source or "")), path)
            progress.add(data=j.size)
        else:
            links.append(j)
    # Links last, so nothing is ever written through one.
    for j in links:
        ctx.fs.symlink(str(staging / j.name), j.member.target or "")


def _reported(chunks: Iterable[bytes], progress: Progress) -> Iterator[bytes]:
    for chunk in chunks:
        progress.add(data=len(chunk))
        yield chunk


def _report(label: str, fmt: str, target: Plan, judged: list[Judged], total: int, budget: int, left_out: list[Judged]) -> ToolResult:
    kinds = [j.member.kind for j in judged if j.name]
    files, dirs = kinds.count("file"), kinds.count("directory")
    symlinks, hardlinks = kinds.count("symlink"), kinds.count("hardlink")
    parts = [count(files, "file"), count(dirs, "directory", "directories")]
    if symlinks:
        parts.append(count(symlinks, "symlink"))
    if hardlinks:
        parts.append(count(hardlinks, "hard link") + " (copied)")
    lines = [f"Extracted {count(len(kinds), 'member')} ({total:,} bytes) from {label} ({fmt}) into {target.dest}: {', '.join(parts)}"]
    replaced = [str(target.dest / rel) for rel in target.conflicts]
    lines += [f"replaced {path}" for path in replaced]
    lines += [f"left out {shown_name(str(target.dest / j.name))}: {protected_note('writes')}" for j in left_out]
    data = {
        "archive": label,
        "destination": str(target.dest),
        "format": fmt,
        "members": len(kinds),
        "files": files,
        "directories": dirs,
        "symlinks": symlinks,
        "hardlinks": hardlinks,
        "bytes": total,
        "replaced": replaced,
    }
    text, _ = truncate("\n".join(lines), budget, "list_directory on the destination shows every path.")
    return ToolResult.text(text, data)
