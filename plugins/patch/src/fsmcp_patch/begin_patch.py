"""OpenAI's apply_patch format, read into the sections a unified diff gives::

    *** Begin Patch
    *** Add File: PATH           then its lines, each after a '+'
    *** Delete File: PATH
    *** Update File: PATH        then, optionally, *** Move to: NEW PATH, then hunks:
    @@ TEXT                      none or more: a line to find first (a def, a class), in turn
     context / -removed / +added lines
    *** End of File              the hunk's old lines end the file
    *** End Patch

As lenient as codex's own reader where models rely on it: text before ``*** Begin Patch`` and
after ``*** End Patch`` (a fence, a heredoc) is ignored, the first hunk of a file may leave out
its ``@@`` line, an empty line in a hunk is an empty context line, and several ``@@`` lines in a
row narrow the place down one after the other (a class, then its method).
"""

from __future__ import annotations

import re

from fsmcp import ErrorCode, ToolError

from .parse import Hunk, Line, Section

BEGIN = "*** Begin Patch"
_END = "*** End Patch"
_ADD, _DELETE, _UPDATE, _MOVE = "*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:"
_END_OF_FILE = "*** End of File"
# A unified hunk header written where an @@ line belongs: its numbers mean nothing here.
_NUMBERS = re.compile(r"^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def begin_line(lines: list[str]) -> int | None:
    """The line ``*** Begin Patch`` is on: the first line of the text, padded or not (as codex
    takes it), or a line of its own further down (after prose), where a diff's line cannot be."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].strip() == BEGIN:
        return first
    return next((i for i, line in enumerate(lines) if line.rstrip() == BEGIN), None)


def end_line(lines: list[str], begin: int) -> int | None:
    """The line of the patch's ``*** End Patch``: the last one, so that a context line of a file
    that quotes the marker cannot end the patch early."""
    return next((i for i in range(len(lines) - 1, begin, -1) if lines[i].strip() == _END), None)


def parse_begin_patch(lines: list[str], begin: int) -> list[Section]:
    """The sections of the apply_patch text whose ``*** Begin Patch`` is ``lines[begin]``; INVALID_PARAMS when malformed."""
    start = begin + 1
    end = end_line(lines, begin)
    if end is None:
        raise _malformed(len(lines), "there is no '*** End Patch' line after '*** Begin Patch': the patch may be cut short. End it with '*** End Patch'")
    reader = _Reader(lines, start, end)
    sections = reader.run()
    if not sections:
        raise _malformed(start, "the patch changes no file: give '*** Add File:', '*** Delete File:' or '*** Update File:' sections")
    return sections


class _Reader:
    def __init__(self, lines: list[str], start: int, end: int):
        self.lines = lines
        self.i = start
        self.end = end

    def run(self) -> list[Section]:
        sections = []
        while self.i < self.end:
            line = self.lines[self.i].strip()  # codex tolerates padding around a section's marker
            if not line:
                self.i += 1
            elif line.startswith(_ADD):
                sections.append(self._add(_path(line, _ADD, self.i)))
            elif line.startswith(_DELETE):
                sections.append(Section("delete", _path(line, _DELETE, self.i), None, [], True, any_content=True))
                self.i += 1
            elif line.startswith(_UPDATE):
                sections.append(self._update(_path(line, _UPDATE, self.i)))
            else:
                raise _malformed(
                    self.i + 1,
                    f"{line[:80]!r} does not start a file's change; each starts with '*** Add File: PATH', "
                    "'*** Delete File: PATH' or '*** Update File: PATH'",
                )
        return sections

    def _add(self, path: str) -> Section:
        self.i += 1
        added: list[Line] = []
        bare = 0  # empty lines without '+' at the end so far: they separate sections, as codex reads them
        while self.i < self.end and (not self.lines[self.i] or self.lines[self.i].startswith("+")):
            line = self.lines[self.i]
            bare = 0 if line else bare + 1
            added.append(Line("+", line[1:]))
            self.i += 1
        # The next line starts the next section (run says so if it does not).
        added = added[: len(added) - bare]
        hunks = [Hunk(0, 0, 1, len(added), "*** Add File", added, numbered=False)] if added else []
        return Section("create", None, path, hunks, True)

    def _update(self, path: str) -> Section:
        header_line = self.i
        self.i += 1
        move = None
        if self.i < self.end and self.lines[self.i].strip().startswith(_MOVE):
            move = _path(self.lines[self.i].strip(), _MOVE, self.i)
            self.i += 1
        hunks: list[Hunk] = []
        anchors: list[str] = []
        hunk: Hunk | None = None
        while self.i < self.end:
            raw = self.lines[self.i]
            if raw.startswith("***"):
                if raw.rstrip() != _END_OF_FILE:
                    break
                if hunk is None:
                    raise _malformed(self.i + 1, "'*** End of File' follows no hunk lines")
                hunk.at_end = True
                hunk = None
            elif raw.startswith("@@"):
                hunk = None
                text = raw[2:].removeprefix(" ")
                if text.strip() and not _NUMBERS.match(text):
                    anchors.append(text)
            else:
                op = raw[:1] or " "
                if op not in " -+":
                    raise _malformed(
                        self.i + 1,
                        f"{raw[:80]!r} is not a hunk line: each starts with ' ' (context), '-' (removed) or '+' (added); "
                        "'@@ TEXT' starts a hunk",
                    )
                if hunk is None:
                    hunk = Hunk(1, 0, 1, 0, " ".join(f"@@ {a}" for a in anchors) or "@@", numbered=False, anchors=anchors)
                    hunks.append(hunk)
                    anchors = []
                hunk.lines.append(Line(op, raw[1:]))
                hunk.old_count += op != "+"
                hunk.new_count += op != "-"
            self.i += 1
        if anchors:
            raise _malformed(self.i, f"the '@@ {anchors[-1]}' line of {path} is followed by no hunk lines")
        if not hunks and move is None:
            raise _malformed(header_line + 1, f"'*** Update File: {path}' has no hunks: give '@@' hunks of ' ', '-' and '+' lines")
        return Section("modify" if move is None else "rename", path, move or path, hunks, True)


def _path(line: str, marker: str, i: int) -> str:
    path = line[len(marker):].strip()
    if not path:
        raise _malformed(i + 1, f"'{marker}' names no file")
    return path


def _malformed(line: int, what: str) -> ToolError:
    return ToolError(ErrorCode.INVALID_PARAMS, f"the apply_patch text is malformed at line {line}: {what}; nothing was changed")
