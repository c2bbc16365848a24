"""The whole patch worked out in memory: every file's new content before anything is written.

Sections apply in order to an overlay of the files they touch, so a later section sees what an
earlier one did (a file renamed, then changed). Names in the diff resolve against one base
directory: ``path`` when it is a directory, else the workspace; ``path`` naming a file takes
the place of the diff's names for a one-file diff.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ToolError, truncate

from .apply import Applied, Mismatch, apply
from .parse import BOM, Section, side_is_empty

if TYPE_CHECKING:
    from pathlib import Path

    from fsmcp import ResolvedPath, ToolContext

    from .formats import Format


@dataclass
class State:
    """One file: as it is on disk (``before``) and as the patch leaves it (``after``); None is absent."""

    path: ResolvedPath
    before: bytes | None
    after: bytes | None
    moved_from: State | None = None


@dataclass
class Report:
    """What the patch does to one file, for the result."""

    action: str
    """``patch``, ``create``, ``delete``, ``rename``, ``copy`` or ``keep`` (mode change only)."""
    path: str
    source: str | None = None
    hunks: int = 0
    offsets: dict[int, int] = field(default_factory=dict)
    lines: int | None = None
    notes: list[str] = field(default_factory=list)


class Plan:
    def __init__(self, ctx: ToolContext, path: str | None, sections: list[Section], fmt: Format):
        self.ctx = ctx
        self.fmt = fmt
        self.fs = ctx.fs
        self.sections = sections
        self.states: dict[Path, State] = {}
        self.reports: list[Report] = []
        self.failures: list[tuple[str, str]] = []
        self.mismatched = 0
        # An added file's lines (apply_patch's *** Add File) are no hunk the text shows.
        self.hunks = sum(len(s.hunks) for s in sections if s.kind != "create" or all(h.numbered for h in s.hunks))
        self.base, self.single = self._targets(path)

    def run(self) -> None:
        """Work out every section; PATCH_FAILED naming every hunk that does not match."""
        for section in self.sections:
            self.ctx.check_cancelled()
            getattr(self, f"_{section.kind}")(section)
        if self.failures:
            raise self._failed()
        limit = self.fs.max_file_bytes
        for state in self.changed():
            if state.after is not None and len(state.after) > limit:
                raise ToolError(
                    ErrorCode.FILE_TOO_LARGE,
                    f"patched, {state.path} would be {len(state.after):,} bytes, over the server's {limit:,}-byte "
                    "limit (max_file_bytes); nothing was written",
                )

    def changed(self) -> list[State]:
        return [s for s in self.states.values() if s.after != s.before]

    # -- where the files are ------------------------------------------------------------------

    def _targets(self, path: str | None) -> tuple[str, str | None]:
        """The directory names resolve against, or the one file ``path`` names instead."""
        if path is None:
            if not all(s.named for s in self.sections):
                raise ToolError(ErrorCode.INVALID_PARAMS, f"this patch names no file (it has no {self.fmt.names}); pass path: the file to patch")
            return str(self.ctx.roots.workspace), None
        if self.fs.kind(path) == "directory":
            if not all(s.named for s in self.sections):
                raise ToolError(ErrorCode.INVALID_PARAMS, f"this patch names no file, so path must name the file to patch, not the directory {path}")
            return str(self.fs.resolve(path).path), None
        files = len({(s.old, s.new) for s in self.sections})
        if files > 1:
            raise ToolError(
                ErrorCode.INVALID_PARAMS,
                f"the patch changes {files} files but path names one file; leave path out "
                "(names resolve against the workspace) or give the directory they are relative to",
            )
        if self.sections[0].kind in ("rename", "copy"):
            raise ToolError(ErrorCode.INVALID_PARAMS, "the diff renames or copies a file, so it names both files itself; leave path out or give a directory")
        return "", path

    def _resolve(self, name: str | None, *, link_ok: bool = True, entry: bool = False) -> ResolvedPath:
        """``entry``: the name itself is made (a rename's or copy's target), checked as move_file
        and copy_file check theirs: without following a link, so allow_write plants no protected name."""
        if not name:
            raise ToolError(ErrorCode.INVALID_PARAMS, "a change in the diff names no file (both sides are /dev/null); give a real file name on one side")
        if name.endswith("/"):
            # The host would drop the slash and make a file of what was meant as a directory.
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{name} ends in '/', so it names a directory; a patch changes files only: name the file")
        raw = os.path.join(self.base, name)
        resolved = self.fs.resolve(raw, Access.WRITE, follow_links=not entry)
        if not link_ok and self.fs.resolve(raw, Access.WRITE, follow_links=False).path != resolved.path:
            raise ToolError(ErrorCode.NOT_FILE, f"{raw} is a symbolic link; a patch deletes or renames files, not links (delete_file removes a link)")
        return resolved

    def _state(self, path: ResolvedPath) -> State:
        state = self.states.get(path.path)
        if state is None:
            kind = self.fs.kind(path)
            if kind not in (None, "file"):
                what = {"directory": "a directory", "symlink": "a symbolic link"}.get(kind, "a special file (a pipe, socket or device)")
                raise ToolError(ErrorCode.NOT_FILE, f"{path} is {what}, not a file; a patch changes files only")
            data = self.fs.read_bytes(path) if kind == "file" else None
            state = self.states[path.path] = State(path, data, data)
        return state

    def _one(self, name: str | None, other: str | None, *, link_ok: bool = True) -> State:
        return self._state(self._resolve(self.single or name or other, link_ok=link_ok))

    # -- the kinds of section -----------------------------------------------------------------

    def _create(self, s: Section) -> None:
        state = self._one(s.new, s.old)
        if state.after is not None:
            raise ToolError(
                ErrorCode.ALREADY_EXISTS,
                f"{state.path} already exists, but the patch creates it ({self.fmt.creates}); "
                "delete it first, or make the patch against its current content",
            )
        self._room(state, ErrorCode.NOT_FILE)
        self._patch(s, state, b"", "create")

    def _room(self, state: State, inside: ErrorCode) -> None:
        """Refuse, as writing will, a file the patch makes where an earlier section made a file
        of a directory above it, or put files inside it (``inside``: the code writing gives)."""
        here = state.path.path
        for other in self.states.values():
            if other.after is None or other is state:
                continue
            if other.path.path in here.parents:
                raise ToolError(ErrorCode.NOT_DIRECTORY, f"an earlier change in the patch makes {other.path} a file, so it cannot hold {state.path}")
            if here in other.path.path.parents:
                raise ToolError(inside, f"an earlier change in the patch puts {other.path} inside {state.path}, so {state.path} is a directory, not a file")

    def _modify(self, s: Section) -> None:
        if self.single is not None:
            state = self._one(None, None)
        else:
            # Two names differ when two differently named files were compared (diff -u
            # old.c new.c, diff -ruN orig/ new/): change the one that exists, the old one first,
            # as patch(1) does; a name outside the roots (diff -u notes.txt /tmp/scratch) is passed over.
            candidates, refused = [], None
            for name in dict.fromkeys(x for x in (s.old, s.new) if x):
                try:
                    candidates.append(self._state(self._resolve(name)))
                except ToolError as exc:
                    if exc.code not in (ErrorCode.ACCESS_DENIED, ErrorCode.READ_ONLY):
                        raise
                    refused = refused or exc
            state = next((c for c in candidates if c.after is not None), candidates[-1] if candidates else None)
            if state is None or (state.after is None and refused is not None):
                raise refused  # type: ignore[misc]
        if state.after is None:
            if side_is_empty(s.hunks, "old"):
                self._room(state, ErrorCode.NOT_FILE)
                self._patch(s, state, b"", "create")
                return
            where = "" if self.single else f" (names in the patch resolve against {self.base})"
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"{state.path} does not exist, and the patch changes it rather than creating it; check the path{where}, "
                f"or make the patch create the file ({self.fmt.creates})",
            )
        if not s.hunks:
            self.reports.append(Report("keep", str(state.path), notes=s.notes))
            return
        self._patch(s, state, state.after, "patch")

    def _delete(self, s: Section) -> None:
        state = self._one(s.old, s.new, link_ok=False)
        if state.after is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"{state.path} does not exist, so the patch cannot delete it ({self.fmt.deletes})")
        if s.any_content:
            state.after = None
            self.reports.append(Report("delete", str(state.path), notes=s.notes))
            return
        result = self._apply(s, state, state.after)
        if result is None:
            return
        if result.data.removeprefix(BOM.encode()):
            self.failures.append((str(state.path), _not_all_deleted(result.lines)))
            return
        state.after = None
        self.reports.append(Report("delete", str(state.path), hunks=len(s.hunks), notes=s.notes))

    def _rename(self, s: Section) -> None:
        source = self._state(self._resolve(s.old, link_ok=False))
        target = self._state(self._resolve(s.new, entry=True))
        if source.after is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"{source.path} does not exist, so the patch cannot {s.kind} it to {target.path}")
        if target.after is not None and target is not source:
            raise ToolError(ErrorCode.ALREADY_EXISTS, f"{target.path} already exists; the patch would {s.kind} {source.path} over it. Delete it first")
        if target is not source:
            self._room(target, ErrorCode.ALREADY_EXISTS)
        data = source.after
        result = self._apply(s, source, data) if s.hunks else None
        if s.hunks and result is None:
            return
        target.after = result.data if result else data
        if s.kind == "rename" and target is not source:
            source.after = None
            target.moved_from = source
        notes = s.notes + (result.tolerated if result else [])
        report = Report(s.kind, str(target.path), str(source.path), len(s.hunks), result.offsets if result else {}, notes=notes)
        self.reports.append(report)

    _copy = _rename  # the kind checks above keep the source of a copy

    def _patch(self, s: Section, state: State, data: bytes, action: str) -> None:
        result = self._apply(s, state, data)
        if result is None:
            return
        state.after = result.data
        notes = s.notes + result.tolerated
        if result.codec != "utf-8":
            notes.append(f"not UTF-8, matched as {result.codec} text")
        lines = result.lines if action == "create" else None
        earlier = next((r for r in self.reports if r.path == str(state.path) and r.action in ("create", "patch")), None)
        if earlier is not None and self.fmt.noun == "block":
            # SEARCH/REPLACE blocks are a section each: the file gets one line for all of them.
            earlier.hunks += len(s.hunks)
            earlier.lines = result.lines if earlier.action == "create" else None
            earlier.notes += [n for n in notes if n not in earlier.notes]
            return
        self.reports.append(Report(action, str(state.path), None, len(s.hunks), result.offsets, lines, notes))

    def _apply(self, s: Section, state: State, data: bytes) -> Applied | None:
        try:
            # allow_write lets a protected file be patched, never read: a failed hunk shows none of its lines.
            return apply(data, s.hunks, s.literal_eol, show=not self.ctx.is_protected(state.path))
        except Mismatch as exc:
            self.mismatched += len(exc.reports)
            self.failures += [(str(state.path), report) for report in exc.reports]
            return None

    # -- failure ------------------------------------------------------------------------------

    def _failed(self) -> ToolError:
        files = list(dict.fromkeys(path for path, _ in self.failures))
        mismatched = self.mismatched
        which = f": {mismatched} of its {_count(self.hunks, self.fmt.noun)} {'does' if mismatched == 1 else 'do'} not match" if mismatched else ""
        head = f"the patch does not apply to {', '.join(files)}{which}. Nothing was changed: a patch applies whole or not at all."
        body = "\n\n".join(f"{path}: {report}" for path, report in self.failures)
        advice = f"Re-read {'that file' if len(files) == 1 else 'those files'} and {self.fmt.rule}."
        if all(self.ctx.is_protected(path) for path in files):
            advice = "Ask the user for the file's current lines, or replace the whole file with write_file."
        text, _ = truncate(f"{head}\n\n{body}\n\n{advice}", self.ctx.budget, f"Fix the {self.fmt.noun}s shown, then apply again to see the rest.")
        return ToolError(ErrorCode.PATCH_FAILED, text, self._failed_details())

    def _failed_details(self) -> dict[str, object]:
        """Which hunks failed, as data: each report's first line (the text has the rest), as many
        as a tenth of the output budget holds, so the data does not double the result's size."""
        failed: list[dict[str, str]] = []
        room = self.ctx.budget // 10
        for path, report in self.failures:
            head = report.split("\n", 1)[0][:300]
            room -= len(path) + len(head) + 30
            if room < 0:
                break
            failed.append({"path": path, "report": head})
        details: dict[str, object] = {"failed": failed}
        if len(failed) < len(self.failures):
            details["omitted"] = len(self.failures) - len(failed)
        return details


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _not_all_deleted(lines: int) -> str:
    return (
        f"the diff deletes the file (+++ /dev/null), but {_count(lines, 'line')} would remain after its hunks: "
        "the file has lines the diff does not remove. Make the diff remove every line of the current file"
    )
