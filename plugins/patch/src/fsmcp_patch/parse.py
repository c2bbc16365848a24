"""Unified diffs as ``diff -u``, ``diff -ruN`` and ``git diff`` print them, read into sections.

A section is one file's change. The counts in a ``@@`` header are trusted: they are what
tells a removed line that begins with ``--`` from the next file's ``---`` header, and a hunk
cut short from a complete one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fsmcp import ErrorCode, ToolError

from .headers import header_name, is_epoch, split_git_names, strip_prefixes, unquote

BOM = "\ufeff"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_UNSUPPORTED_MODES = {"120000": "a symbolic link", "160000": "a submodule"}


@dataclass
class Line:
    op: str
    """``' '`` context, ``'-'`` removed, ``'+'`` added."""
    text: str
    """The line without its ending; a CR before the LF is taken off too (see ``cr``)."""
    cr: bool = False
    no_eol: bool = False
    """Followed by ``\\ No newline at end of file``."""

    @property
    def key(self) -> str:
        return self.text.rstrip("\r")


@dataclass
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    header: str
    lines: list[Line] = field(default_factory=list)
    adds_bom: bool = False
    numbered: bool = True
    """The header gives line numbers (a unified diff). A hunk of the formats models write has none:
    it is found by its lines, the first match after the previous hunk, whitespace tolerated."""
    anchors: list[str] = field(default_factory=list)
    """apply_patch's ``@@ text`` lines: each is found in turn, and the hunk after the last."""
    at_end: bool = False
    """The old lines end the file (apply_patch's ``*** End of File``; an empty SEARCH appends)."""
    label: str = ""
    """What messages call the hunk when not ``hunk N of M (header)``: a SEARCH/REPLACE ``block N of M``."""

    @property
    def old(self) -> list[Line]:
        return [line for line in self.lines if line.op != "+"]

    @property
    def new(self) -> list[Line]:
        return [line for line in self.lines if line.op != "-"]

    @property
    def hint(self) -> int:
        """The 0-based index where the header says the old lines begin."""
        # With no old lines, -5,0 means "after line 5".
        return self.old_start - 1 if self.old_count else self.old_start


@dataclass
class Section:
    """One file's change."""

    kind: str
    """``modify``, ``create``, ``delete``, ``rename`` or ``copy``."""
    old: str | None
    new: str | None
    hunks: list[Hunk]
    named: bool
    """The diff names the file (it has ``---``/``+++`` or ``diff --git`` headers)."""
    literal_eol: bool = False
    """The diff carries CRLF lines, so each added line keeps the ending it has in the diff."""
    notes: list[str] = field(default_factory=list)
    any_content: bool = False
    """A deletion that names no lines (apply_patch's ``*** Delete File``): whatever the file holds goes."""


@dataclass
class _Draft:
    line: int
    git: bool = False
    headers: bool = False
    old: str | None = None
    new: str | None = None
    old_stamp: str | None = None
    new_stamp: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    new_file: bool = False
    deleted_file: bool = False
    move: str = ""
    """``rename`` or ``copy`` when git's "rename from/to" or "copy from/to" lines are present."""
    move_from: str | None = None
    move_to: str | None = None
    modes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def parse(text: str) -> list[Section]:
    """The sections of a unified diff; INVALID_PARAMS when the text is not one."""
    sections = _Parser(text).run()
    if not sections:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            "the patch is in none of the forms patch_apply reads: no '@@ -a,b +c,d @@' hunk or '---'/'+++' header "
            "(a unified diff), no '*** Begin Patch' line (apply_patch), no '<<<<<<< SEARCH' line (SEARCH/REPLACE blocks)",
        )
    return sections


def _malformed(line: int, what: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_PARAMS, f"the patch is malformed at line {line}: {what}; nothing was changed")


class _Parser:
    def __init__(self, text: str):
        if "\n" in text and text.count("\r\n") == text.count("\n"):
            # Every line, headers too, ends in CRLF: the whole text went through a CRLF
            # conversion, so its CRs say nothing about the files' own line endings.
            text = "\n".join(text.split("\r\n"))
        self.lines = text.split("\n")
        if self.lines[-1] == "":
            self.lines.pop()
        self.i = 0
        self.draft: _Draft | None = None
        self.sections: list[Section] = []

    def run(self) -> list[Section]:
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.startswith("diff --git "):
                self._start(_Draft(self.i + 1, git=True))
                self.draft.old, self.draft.new = split_git_names(line[len("diff --git "):])
                self.i += 1
            elif self._at_file_header():
                self._file_header()
            elif line.startswith("@@"):
                self._hunk()
            elif line.startswith("GIT binary patch") or (line.startswith("Binary files ") and line.endswith(" differ")):
                raise ToolError(
                    ErrorCode.INVALID_PARAMS,
                    f"the patch (line {self.i + 1}) holds a binary change, which a text diff cannot carry ({line[:100]}). "
                    "Leave that file out of the diff and write it with write_file",
                )
            else:
                if self._in_git_headers():
                    self._git_header(line)
                # Anything else between files (a commit message, "Only in …", "Index: …") is
                # not part of any file's change.
                self.i += 1
        self._start(None)
        return self.sections

    def _at_file_header(self) -> bool:
        return (
            self.lines[self.i].startswith("--- ")
            and self.i + 1 < len(self.lines)
            and self.lines[self.i + 1].startswith("+++ ")
        )

    def _in_git_headers(self) -> bool:
        d = self.draft
        return d is not None and d.git and not d.headers and not d.hunks

    def _start(self, draft: _Draft | None) -> None:
        if self.draft is not None:
            self.sections.append(_finish(self.draft))
        self.draft = draft

    def _file_header(self) -> None:
        if not self._in_git_headers():
            self._start(_Draft(self.i + 1))
        d = self.draft
        d.headers = True
        d.old, d.old_stamp = header_name(self.lines[self.i][4:])
        d.new, d.new_stamp = header_name(self.lines[self.i + 1][4:])
        self.i += 2

    def _git_header(self, line: str) -> None:
        d = self.draft
        word, _, rest = line.partition(" ")
        if line.startswith(("new file mode ", "deleted file mode ", "old mode ", "new mode ")):
            mode = line.rsplit(" ", 1)[1]
            if mode in _UNSUPPORTED_MODES:
                raise ToolError(
                    ErrorCode.INVALID_PARAMS,
                    f"the patch (line {self.i + 1}) changes {_UNSUPPORTED_MODES[mode]}, which patch_apply cannot create or "
                    "change; leave that file out of the diff",
                )
            d.new_file |= line.startswith("new file")
            d.deleted_file |= line.startswith("deleted file")
            if line.startswith(("old mode", "new mode")):
                d.modes[word] = mode
            elif line.startswith("new file") and mode != "100644":
                d.notes.append(f"mode {mode} not applied")
        elif line.startswith(("rename from ", "copy from ")):
            d.move, d.move_from = word, unquote(rest[len("from "):])
        elif line.startswith(("rename to ", "copy to ")):
            d.move, d.move_to = word, unquote(rest[len("to "):])

    def _hunk(self) -> None:
        header = self.lines[self.i]
        m = _HUNK.match(header)
        if m is None:
            raise _malformed(
                self.i + 1,
                f"{header[:80]!r} is not a hunk header; it must read '@@ -START,COUNT +START,COUNT @@' "
                "with the line numbers and counts of the old and the new file",
            )
        if self.draft is None:
            self._start(_Draft(self.i + 1))
        old_start, new_start = int(m.group(1)), int(m.group(3))
        old_left = int(m.group(2)) if m.group(2) is not None else 1
        new_left = int(m.group(4)) if m.group(4) is not None else 1
        hunk = Hunk(old_start, old_left, new_start, new_left, m.group(0))
        number = len(self.draft.hunks) + 1
        self.i += 1
        while old_left or new_left:
            if self.i >= len(self.lines):
                raise _hunk_short(hunk, number, self.i, old_left, new_left, "the patch ends")
            raw = self.lines[self.i]
            op = raw[:1] or " "  # an empty line is an empty context line whose space was trimmed
            if op == "\\":
                _mark_no_eol(hunk)
                self.i += 1
                continue
            if op not in " -+":
                raise _hunk_short(hunk, number, self.i, old_left, new_left, f"line {self.i + 1} ({raw[:60]!r}) is not a hunk line")
            if (op != "+" and not old_left) or (op != "-" and not new_left):
                raise _hunk_long(hunk, number, self.i)
            old_left -= op != "+"
            new_left -= op != "-"
            text = raw[1:]
            hunk.lines.append(Line(op, text.removesuffix("\r"), text.endswith("\r")))
            self.i += 1
        if self.i < len(self.lines) and self.lines[self.i].startswith("\\"):
            _mark_no_eol(hunk)
            self.i += 1
        if self.i < len(self.lines) and _looks_like_more_body(self.lines[self.i]) and not self._at_file_header():
            raise _hunk_long(hunk, number, self.i)
        _take_bom(hunk)
        self.draft.hunks.append(hunk)


def _looks_like_more_body(line: str) -> bool:
    # "-- " opens the signature git format-patch puts after the last hunk.
    return line[:1] in ("+", "-", " ") and line.rstrip() != "--"


def _mark_no_eol(hunk: Hunk) -> None:
    if hunk.lines:
        hunk.lines[-1].no_eol = True


def _take_bom(hunk: Hunk) -> None:
    """Take a BOM off the first line of a hunk at the top of the file: the BOM is not text."""
    for side, start in ((" -", hunk.old_start), (" +", hunk.new_start)):
        first = next((line for line in hunk.lines if line.op in side), None)
        if start <= 1 and first is not None and first.text.startswith(BOM):
            first.text = first.text[1:]
            hunk.adds_bom |= side == " +"


def _hunk_short(hunk: Hunk, number: int, i: int, old_left: int, new_left: int, why: str) -> ToolError:
    return _malformed(
        i + 1,
        f"hunk {number} ({hunk.header}) needs {old_left} more old and {new_left} more new line(s) before {why}. "
        "Either the patch was cut short or the counts in the header are wrong: make COUNT in '-START,COUNT' the "
        "number of ' ' and '-' lines and in '+START,COUNT' the number of ' ' and '+' lines",
    )


def _hunk_long(hunk: Hunk, number: int, i: int) -> ToolError:
    return _malformed(
        i + 1,
        f"hunk {number} ({hunk.header}) has more lines than its header counts. Make COUNT in '-START,COUNT' the "
        "number of ' ' and '-' lines and in '+START,COUNT' the number of ' ' and '+' lines",
    )


def _finish(d: _Draft) -> Section:
    old, new = strip_prefixes(d.old, d.new)
    literal = any(line.cr for h in d.hunks for line in h.lines)
    notes = d.notes + ([f"mode change {d.modes.get('old', '?')} → {d.modes.get('new', '?')} not applied"] if d.modes else [])
    named = d.headers or d.git
    if d.move and d.move_from and d.move_to:
        return Section(d.move, d.move_from, d.move_to, d.hunks, True, literal, notes)
    if d.new_file or (d.headers and old is None) or (is_epoch(d.old_stamp) and side_is_empty(d.hunks, "old")):
        return Section("create", old, new, d.hunks, named, literal, notes)
    if d.deleted_file or (d.headers and new is None) or (is_epoch(d.new_stamp) and side_is_empty(d.hunks, "new")):
        return Section("delete", old, new, d.hunks, named, literal, notes)
    if not d.hunks and not notes:
        raise _malformed(d.line, f"the change to {new or old} has no hunks ('@@ -a,b +c,d @@' lines)")
    return Section("modify", old, new, d.hunks, named, literal, notes)


def side_is_empty(hunks: list[Hunk], side: str) -> bool:
    """Every hunk reads ``-0,0`` (side ``old``) or ``+0,0`` (``new``): no file on that side."""
    return bool(hunks) and all(getattr(h, f"{side}_start") == 0 and getattr(h, f"{side}_count") == 0 for h in hunks)
