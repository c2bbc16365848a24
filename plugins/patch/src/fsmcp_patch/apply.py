"""Hunks applied to one file's bytes: exact context, nearest position, the file's own bytes kept.

Lines are compared without their line endings, so a diff with LF lines applies to a CRLF
file. Context lines are copied from the file, never from the diff, so every byte outside the
removed lines stays as it was; added lines take the file's line ending, or the diff's own
where the diff carries CRLF lines (it was taken byte for byte from such a file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fsmcp import ErrorCode, ToolError

from .mismatch import describe
from .parse import BOM, Hunk, Line
from .search import locate

# A file that is not UTF-8 is tried as Windows-1252 and Latin-1 text too: a model quotes the
# context as it read it, é and not the byte 0xE9.
_LEGACY_CODECS = ("cp1252", "latin-1")


@dataclass
class Applied:
    data: bytes
    offsets: dict[int, int] = field(default_factory=dict)
    """Hunk number → how many lines from its header's position it was found (non-zero only)."""
    codec: str = "utf-8"
    lines: int = 0


class Mismatch(Exception):
    """Hunks that do not match; ``reports`` describe each, expected lines against found ones."""

    def __init__(self, reports: list[str]):
        super().__init__("\n\n".join(reports))
        self.reports = reports


def apply(data: bytes, hunks: list[Hunk], literal_eol: bool, *, show: bool = True) -> Applied:
    """The file after every hunk, or Mismatch naming each hunk that does not match (with the
    file's closest lines beside the hunk's unless ``show`` is off: a protected file)."""
    first: Mismatch | None = None
    for codec in _codecs(data):
        errors = "surrogateescape" if codec == "utf-8" else "strict"
        try:
            text = data.decode(codec, errors)
        except UnicodeDecodeError:
            continue
        try:
            result = _apply_text(text, hunks, literal_eol, show)
            out = result.text.encode(codec, errors)
        except Mismatch as exc:
            first = first or exc
            continue
        except UnicodeEncodeError:
            continue  # the added lines hold characters this codec cannot; a later one may
        return Applied(out, result.offsets, codec, result.lines)
    if first is None:
        # Only a lone surrogate (JSON allows "\ud800") makes UTF-8 itself unable to encode.
        raise ToolError(ErrorCode.INVALID_PARAMS, "the patch's added lines hold a character no file can store (a lone UTF-16 surrogate); fix that text")
    raise first


def _codecs(data: bytes) -> tuple[str, ...]:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return ("utf-8", *_LEGACY_CODECS)
    return ("utf-8",)


@dataclass
class _Result:
    text: str
    offsets: dict[int, int]
    lines: int


def split_lines(text: str) -> tuple[list[str], list[str]]:
    """Bodies and endings (``\\r\\n``, ``\\n``, or ``""`` for a last line without one)."""
    parts = text.split("\n")
    last = parts.pop()
    bodies = [p.removesuffix("\r") for p in parts]
    eols = ["\r\n" if p.endswith("\r") else "\n" for p in parts]
    if last:
        bodies.append(last)
        eols.append("")
    return bodies, eols


def _apply_text(text: str, hunks: list[Hunk], literal_eol: bool, show: bool) -> _Result:
    bom = text.startswith(BOM)
    bodies, eols = split_lines(text[1:] if bom else text)
    keys = [b.rstrip("\r") for b in bodies]
    usual = "\r\n" if eols.count("\r\n") > eols.count("\n") else "\n"
    out_bodies: list[str] = []
    out_eols: list[str] = []
    cursor = last_offset = 0
    offsets: dict[int, int] = {}
    failures: list[str] = []
    for number, hunk in enumerate(hunks, 1):
        old = [line.key for line in hunk.old]
        expected = hunk.hint + last_offset
        pos = locate(keys, old, expected, cursor)
        if pos is None:
            failures.append(describe(keys, hunk, number, len(hunks), expected, cursor, show))
            continue
        last_offset = pos - hunk.hint
        if last_offset:
            offsets[number] = last_offset
        out_bodies.extend(bodies[cursor:pos])
        out_eols.extend(eols[cursor:pos])
        i = pos
        for line in hunk.lines:
            if line.op == " ":
                out_bodies.append(bodies[i])
                out_eols.append(eols[i])
            elif line.op == "+":
                out_bodies.append(line.text)
                out_eols.append(_ending(line, literal_eol, usual))
            i += line.op != "+"
        if old and i == len(bodies) and eols[-1] == "" and out_eols and not any(line.no_eol for line in hunk.old):
            # The hunk reaches the end of a file without a final newline but does not say so
            # (a hand-written diff): the file keeps its missing newline.
            out_eols[-1] = ""
        cursor = i
    if failures:
        raise Mismatch(failures)
    out_bodies.extend(bodies[cursor:])
    out_eols.extend(eols[cursor:])
    for i in range(len(out_eols) - 1):
        if not out_eols[i]:
            out_eols[i] = usual  # a line that was last and no longer is
    bom = bom or any(h.adds_bom for h in hunks)
    joined = "".join(b + e for b, e in zip(out_bodies, out_eols))
    return _Result((BOM if bom else "") + joined, offsets, len(out_bodies))


def _ending(line: Line, literal_eol: bool, usual: str) -> str:
    if line.no_eol:
        return ""
    if literal_eol:
        return "\r\n" if line.cr else "\n"
    return usual
