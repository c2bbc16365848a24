"""Where the members go: what already exists at the destination, and moving them into place.

Members are extracted into a staging directory inside the destination, then each topmost new
path is moved into place by rename. Directories the archive shares with the destination are
merged; anything else already there is a conflict, which ``overwrite`` resolves only between
non-directories (a file or link replaces a file or link, never a directory, nor the reverse).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fsmcp import Access, ErrorCode, ToolContext, ToolError

from .safety import Judged
from .text import count

LISTED = 20


@dataclass
class Plan:
    dest: Path
    placements: dict[str, bool] = field(default_factory=dict)
    """Each topmost path the extraction adds, relative to ``dest``: True when it replaces something."""
    clashes: list[str] = field(default_factory=list)
    """Paths where a directory and a non-directory meet: refused even with overwrite."""

    @property
    def conflicts(self) -> list[str]:
        return [rel for rel, replaces in self.placements.items() if replaces]

    def check(self, overwrite: bool) -> None:
        if self.clashes:
            raise ToolError(
                ErrorCode.ALREADY_EXISTS,
                f"{count(len(self.clashes), 'path')} in {self.dest} would change between a directory and a file or link: "
                f"{self._listed(self.clashes)}; overwrite never does that: delete or move those paths first, "
                "or extract into another directory",
                {"clashes": self.clashes},
            )
        if self.conflicts and not overwrite:
            raise ToolError(
                ErrorCode.ALREADY_EXISTS,
                f"{count(len(self.conflicts), 'member')} would replace what already exists in {self.dest}: "
                f"{self._listed(self.conflicts)}; pass overwrite: true to replace them (directories are merged, "
                "never replaced), or extract into another directory",
                {"conflicts": self.conflicts},
            )

    def _listed(self, rels: list[str]) -> str:
        shown = ", ".join(str(self.dest / rel) for rel in rels[:LISTED])
        return shown + (f" and {len(rels) - LISTED:,} more" if len(rels) > LISTED else "")


def plan(ctx: ToolContext, dest: Path, exists: bool, judged: list[Judged]) -> Plan:
    """Compare each member's path with what the destination holds, without changing anything."""
    out = Plan(dest)
    kinds: dict[str, str | None] = {}
    clashed: set[str] = set()

    def kind(rel: str) -> str | None:
        if not exists:
            return None
        if rel not in kinds:
            kinds[rel] = ctx.fs.kind(str(dest / rel), follow_links=False)
        return kinds[rel]

    for j in judged:
        parts = j.name.split("/") if j.name else []
        for i in range(1, len(parts) + 1):
            rel = "/".join(parts[:i])
            if rel in out.placements or rel in clashed:
                break
            existing = kind(rel)
            wants_dir = i < len(parts) or j.member.kind == "directory"
            if existing == "directory" and wants_dir:
                continue
            if existing is None:
                out.placements[rel] = False
            elif existing == "directory" or wants_dir:
                out.clashes.append(rel)
                clashed.add(rel)
            else:
                out.placements[rel] = True
            break
    for rel in out.placements:
        # A place inside a nested read-only root is refused now, not half-way through.
        ctx.fs.resolve(str(dest / rel), Access.WRITE, follow_links=False)
    return out


def place(ctx: ToolContext, staging: Path, target: Plan) -> None:
    """Move every staged topmost path into the destination."""
    for rel, replaces in sorted(target.placements.items()):
        ctx.fs.rename(str(staging / rel), str(target.dest / rel), overwrite=replaces)


def set_directory_modes(ctx: ToolContext, target: Plan, judged: list[Judged]) -> None:
    """Give new directories their archived modes, deepest first (a parent may forbid entry).

    Deferred to the end: a directory whose mode forbids writing could not be filled, nor moved.
    Directories that were already there keep their own modes.
    """
    modes = {
        j.name: j.member.mode & 0o777
        for j in judged
        if j.member.kind == "directory" and j.name and j.member.mode is not None and _is_new(j.name, target.placements)
    }
    for name in sorted(modes, key=lambda n: n.count("/"), reverse=True):
        ctx.fs.chmod(str(target.dest / name), modes[name])


def _is_new(name: str, placements: dict[str, bool]) -> bool:
    parts = name.split("/")
    return any("/".join(parts[:i]) in placements for i in range(1, len(parts) + 1))
