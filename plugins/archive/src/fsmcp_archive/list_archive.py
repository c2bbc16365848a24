"""list_archive: every member with its type, mode, size and link, held to the output budget."""

from __future__ import annotations

from fsmcp import Access, ToolContext, ToolResult

from .models import ListInput
from .options import Limits
from .progress import Progress
from .members import Member
from .readers import open_reader
from .safety import Judged, judge
from .text import count, shown

_TYPES = {"directory": "dir", "hardlink": "hardlink"}


def list_archive(args: ListInput, ctx: ToolContext) -> ToolResult:
    limits = Limits.of(ctx.options)
    archive = ctx.fs.resolve(args.archive, Access.READ)
    label = str(archive)
    size = ctx.fs.stat(archive).st_size
    progress = Progress(ctx, "reading member headers")
    with ctx.fs.open_read(archive) as fh, open_reader(fh, label, size, limits) as reader:
        members: list[Member] = []
        for member in reader.members():
            members.append(member)
            progress.add(members=1)
        fmt = reader.format
    progress.send()
    verdict = judge(members, limits, ctx.fs.max_file_bytes)

    kinds = [m.kind for m in members]
    total = sum(m.size for m in members)
    summary = [
        f"{label} ({fmt}, {size:,} bytes): {count(len(members), 'member')} ({_breakdown(kinds)}); {total:,} bytes uncompressed"
    ]
    refused = verdict.refused
    problem = verdict.problem(label, limits)
    if refused:
        summary.append(f"extract_archive would refuse {count(len(refused), 'member')}, marked [refused: ...] below")
    elif problem is not None:
        summary.append(f"extract_archive would refuse this archive: {problem.message}")

    room = ctx.budget - sum(len(line) + 1 for line in summary) - 200
    lines: list[str] = []
    shown_members = []
    for j in verdict.judged[args.offset :]:
        line = _line(j)
        if len(line) + 1 > room:
            if lines:
                break
            # One member always shows, cut if it must be, so that offset always moves on.
            line = line[: max(room - 2, 40)] + "…"
        room -= len(line) + 1
        lines.append(line)
        shown_members.append(_data(j))
    last = args.offset + len(lines)
    if last < len(members):
        lines.append(
            f"[truncated: listed members {args.offset + 1:,}-{last:,} of {len(members):,} (output budget {ctx.budget:,}). "
            f"Pass offset: {last} to list the rest.]"
        )
    elif args.offset and not shown_members:
        lines.append(f"[offset {args.offset:,} is past the last member ({len(members):,}); nothing more to list]")
    data = {
        "archive": label,
        "format": fmt,
        "size": size,
        "members": len(members),
        "bytes": total,
        "refused": len(refused),
        "offset": args.offset,
        "listed": shown_members,
    }
    return ToolResult.text("\n".join(summary + lines), data)


def _breakdown(kinds: list[str]) -> str:
    parts = [count(kinds.count("file"), "file"), count(kinds.count("directory"), "directory", "directories")]
    for kind, noun in (("symlink", "symlink"), ("hardlink", "hard link")):
        if kind in kinds:
            parts.append(count(kinds.count(kind), noun))
    other = len(kinds) - sum(kinds.count(k) for k in ("file", "directory", "symlink", "hardlink"))
    if other:
        parts.append(count(other, "other"))
    return ", ".join(parts)


def _line(j: Judged) -> str:
    m = j.member
    mode = f"{m.mode:04o}" if m.mode is not None else "----"
    name = shown(m.raw + "/" if m.kind == "directory" and not m.raw.endswith("/") else m.raw)
    if m.kind == "symlink":
        name += f" -> {shown(m.target or '')}"
    elif m.kind == "hardlink":
        name += f" (hard link to {shown(m.target or '')})"
    line = f"{_TYPES.get(m.kind, m.kind):<8} {mode} {m.size:>12} {name}"
    if j.refusal is not None:
        line += f"  [refused: {j.refusal.code.value}: {j.refusal.reason}]"
    return line


def _data(j: Judged) -> dict[str, object]:
    m = j.member
    out: dict[str, object] = {"name": m.raw, "type": m.kind, "size": m.size, "mode": m.mode}
    if m.target is not None:
        out["target"] = m.target
    if j.refusal is not None:
        out["refused"] = f"{j.refusal.code.value}: {j.refusal.reason}"
    return out
