"""Which members extraction refuses, and why: every check made before anything is written.

A member's name must stay inside the destination once normalised; a link's target, read from
the link's own directory, too; a hard link must point to a file earlier in the archive; no
member may lie below a link member (writing through a link is how an archive leaves its
destination); devices, pipes and sockets are never created. Sizes are judged on the headers
here, and again on the real bytes while extracting (members.Tally).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from fsmcp import ErrorCode, ToolError

from .options import RATIO_FLOOR, Limits, raise_hint
from .members import Member
from .text import shown

_DRIVE = re.compile(r"^[A-Za-z]:")
_UNSUPPORTED_KINDS = {
    "device": "is a device file",
    "fifo": "is a named pipe (FIFO)",
    "socket": "is a socket",
    "other": "is of a type extraction does not create (only files, directories and links are)",
}


@dataclass
class Refusal:
    code: ErrorCode
    reason: str
    """Completes the sentence "member NAME ..."."""


@dataclass
class Judged:
    member: Member
    name: str = ""
    """Its path below the destination, /-separated ('' for the destination itself)."""
    source: str | None = None
    """For a hard link: the name of the member it copies."""
    size: int = 0
    """The bytes extracting it writes."""
    refusal: Refusal | None = None


@dataclass
class Verdict:
    judged: list[Judged]
    total: int
    """Bytes the accepted members write, hard-link copies included."""

    @property
    def refused(self) -> list[Judged]:
        return [j for j in self.judged if j.refusal is not None]

    def problem(self, label: str, limits: Limits) -> ToolError | None:
        """The first reason to refuse the whole archive, or None."""
        refused = self.refused
        if refused:
            first = refused[0]
            more = f" ({len(refused):,} members are refused in all; list_archive marks each)" if len(refused) > 1 else ""
            return ToolError(first.refusal.code, f"member {shown(first.member.raw)} of {label} {first.refusal.reason}{more}")
        if self.total > limits.max_total_bytes:
            return ToolError(
                ErrorCode.FILE_TOO_LARGE,
                f"{label} would extract to {self.total:,} bytes, over the max_total_bytes limit of "
                f"{limits.max_total_bytes:,} ({raise_hint('max_total_bytes')})",
            )
        return None


def judge(members: list[Member], limits: Limits, max_file_bytes: int) -> Verdict:
    judged = [_alone(m, limits, max_file_bytes) for m in members]
    accepted = [j for j in judged if j.refusal is None]
    links = {_fold(j.name): j.name for j in accepted if j.member.kind == "symlink"}
    not_dirs = {j.name for j in accepted if j.member.kind != "directory"}
    seen: dict[str, str] = {}
    files: dict[str, int] = {}
    total = 0
    for j in accepted:
        j.refusal = _twice(j, seen) or _below(j.name, links, not_dirs) or _linked(j, links, files)
        if j.refusal is not None:
            continue
        seen[j.name] = j.member.kind
        if j.member.kind == "file":
            files[j.name] = j.size = j.member.size
        total += j.size
    return Verdict(judged, total)


def normalise(raw: str) -> str:
    """A member name as a path below the destination; raises Refused when it would leave it."""
    if "\x00" in raw:
        raise Refused(ErrorCode.ACCESS_DENIED, "has a NUL byte in its name")
    # Windows tools write "\" as the separator, and Windows would read it as one: so do we.
    name = raw.replace("\\", "/")
    if name.startswith("/"):
        raise Refused(ErrorCode.ACCESS_DENIED, "has an absolute name, which would land outside the destination")
    if _DRIVE.match(name):
        raise Refused(ErrorCode.ACCESS_DENIED, "has a name that starts with a drive letter, which would land outside the destination")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(ErrorCode.ACCESS_DENIED, "has '..' in its name, which climbs out of the destination")
    joined = "/".join(parts)
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(ErrorCode.INVALID_PARAMS, "has a name that is not valid UTF-8, which this server cannot create") from None
    return joined


class Refused(Exception):
    def __init__(self, code: ErrorCode, reason: str):
        super().__init__(reason)
        self.refusal = Refusal(code, reason)


def _alone(m: Member, limits: Limits, max_file_bytes: int) -> Judged:
    """The checks a member passes or fails on its own."""
    j = Judged(m)
    if m.unreadable is not None:
        j.refusal = Refusal(ErrorCode.INVALID_PARAMS, m.unreadable)
        return j
    if m.kind in _UNSUPPORTED_KINDS:
        j.refusal = Refusal(ErrorCode.INVALID_PARAMS, _UNSUPPORTED_KINDS[m.kind] + "; extraction never creates one")
        return j
    try:
        j.name = normalise(m.raw)
    except Refused as exc:
        j.refusal = exc.refusal
        return j
    if not j.name and m.kind != "directory":
        j.refusal = Refusal(ErrorCode.INVALID_PARAMS, "names the destination itself")
    elif m.size > max_file_bytes:
        j.refusal = Refusal(
            ErrorCode.FILE_TOO_LARGE,
            f"is {m.size:,} bytes, over the server's max_file_bytes write limit of {max_file_bytes:,} "
            "(a top-level setting in fsmcp.toml)",
        )
    elif m.packed is not None and m.size > RATIO_FLOOR and m.size / max(m.packed, 1) > limits.max_ratio:
        j.refusal = Refusal(
            ErrorCode.FILE_TOO_LARGE,
            f"expands {m.size:,} bytes from {m.packed:,} ({m.size / max(m.packed, 1):,.0f}:1), past the max_ratio limit "
            f"of {limits.max_ratio:,}:1 (a compression bomb?); {raise_hint('max_ratio')}",
        )
    elif m.kind == "symlink" and m.target is None:
        j.refusal = Refusal(ErrorCode.INVALID_PARAMS, "is a link whose target is too long to be a path")
    return j


def _twice(j: Judged, seen: dict[str, str]) -> Refusal | None:
    before = seen.get(j.name)
    if before is None or (before == "directory" and j.member.kind == "directory"):
        return None
    return Refusal(ErrorCode.INVALID_PARAMS, "appears twice in the archive (the later copy would replace the earlier one)")


def _below(name: str, links: dict[str, str], not_dirs: set[str]) -> Refusal | None:
    parts = name.split("/")
    for i in range(1, len(parts)):
        above = "/".join(parts[:i])
        # Folded: on a case-insensitive disk, "Link/x" is written through the link "link".
        link = links.get(_fold(above))
        if link is not None:
            return Refusal(
                ErrorCode.ACCESS_DENIED,
                f"lies below the link member {shown(link)}; writing through a link could leave the destination",
            )
        if above in not_dirs:
            return Refusal(ErrorCode.INVALID_PARAMS, f"lies below {shown(above)}, which is not a directory in the archive")
    return None


def _linked(j: Judged, links: dict[str, str], files: dict[str, int]) -> Refusal | None:
    target = j.member.target
    if j.member.kind == "symlink":
        return _symlink_target(j.name, target or "", links)
    if j.member.kind != "hardlink":
        return None
    try:
        source = normalise(target or "")
    except Refused:
        return Refusal(ErrorCode.ACCESS_DENIED, f"is a hard link to {target!r}, outside the destination")
    if source not in files:
        return Refusal(ErrorCode.ACCESS_DENIED, f"is a hard link to {target!r}, which is not a file earlier in the archive")
    j.source, j.size = source, files[source]
    return None


def _symlink_target(name: str, target: str, links: dict[str, str]) -> Refusal | None:
    if not target:
        return Refusal(ErrorCode.INVALID_PARAMS, "is a link with an empty target")
    if "\x00" in target or "\\" in target:
        # A "\" is a name character here but a separator elsewhere: its meaning is not ours to pick.
        return Refusal(ErrorCode.ACCESS_DENIED, f"is a link to {target!r}, whose NUL byte or backslash is refused")
    if target.startswith("/") or _DRIVE.match(target):
        return Refusal(ErrorCode.ACCESS_DENIED, f"is a link to the absolute path {target!r}, outside the destination")
    try:
        target.encode("utf-8")
    except UnicodeEncodeError:
        return Refusal(ErrorCode.INVALID_PARAMS, "is a link whose target is not valid UTF-8")
    where = name.split("/")[:-1]
    parts = target.split("/")
    for i, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            if not where:
                return Refusal(ErrorCode.ACCESS_DENIED, f"is a link to {target!r}, which leads outside the destination")
            where.pop()
        else:
            where.append(part)
        # Through another link, ".." would climb from wherever that link leads, not from here.
        if i < len(parts) - 1 and _fold("/".join(where)) in links:
            return Refusal(
                ErrorCode.ACCESS_DENIED,
                f"is a link to {target!r}, which passes through the link member {shown('/'.join(where))}",
            )
    return None


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()
