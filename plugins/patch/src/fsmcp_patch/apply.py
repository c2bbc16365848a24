"""Hunks applied to one file's bytes: exact context, nearest position, the file's own bytes kept.

Lines are compared without their line endings, so a diff with LF lines applies to a CRLF
file. Context lines are copied from the file, never from the diff, so every byte outside the
removed lines stays as it was; added lines take the file's line ending, or the diff's own
where the diff carries CRLF lines (it was taken byte for byte from such a file).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from fsmcp import ErrorCode, ToolError

from .mismatch import describe, describe_anchor, name
from .parse import BOM, Hunk, Line
from .search import TOLERANCES, find, locate

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
    tolerated: list[str] = field(default_factory=list)
    """What a hunk without line numbers needed to match (``hunk 2 matched ignoring indentation``)."""


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
        return Applied(out, result.offsets, codec, result.lines, result.tolerated)
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
    tolerated: list[str]


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
    tolerated: list[str] = []
    seen: dict[int, list[str]] = {}
    for number, hunk in enumerate(hunks, 1):
        if hunk.numbered:
            old = [line.key for line in hunk.old]
            expected = hunk.hint + last_offset
            pos = locate(keys, old, expected, cursor)
            if pos is None:
                failures.append(describe(keys, hunk, number, len(hunks), expected, cursor, show))
                continue
            last_offset = pos - hunk.hint
            if last_offset:
                offsets[number] = last_offset
        else:
            placed = _place(keys, seen, hunk, number, len(hunks), cursor, show)
            if isinstance(placed, str):
                failures.append(placed)
                continue
            pos, hunk, tier = placed
            if tier:
                tolerated.append(f"{name(hunk, number, len(hunks), short=True)} matched {TOLERANCES[tier][0]}")
            old = [line.key for line in hunk.old]
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
        if bodies and i == len(bodies) and eols[-1] == "" and out_eols and not any(line.no_eol for line in hunk.lines):
            # The hunk reaches, or adds at, the end of a file without a final newline but does
            # not say so (a hand-written diff, an append): the file keeps its missing newline.
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
    return _Result((BOM if bom else "") + joined, offsets, len(out_bodies), tolerated)


def _place(keys: list[str], seen: dict[int, list[str]], hunk: Hunk, number: int, total: int, lo: int, show: bool) -> tuple[int, Hunk, int] | str:
    """Where a hunk without line numbers goes: after its @@ lines, at the first match of its old
    lines, the least tolerance first; the hunk as it applies there; or the failure report.
    ``seen``: ``keys`` as each tolerance sees them (``find``), kept for the file's next hunks."""
    for anchor in hunk.anchors:
        hit = find(keys, [anchor], lo, False, seen)
        if hit is None:
            return describe_anchor(keys, hunk, anchor, number, total, lo, show)
        lo = hit[0] + 1
    for lines in _trimmed(hunk.lines):
        old = [line.key for line in lines if line.op != "+"]
        # Lines added with nothing to find go after the @@ lines that place them, else at the
        # end of the file, as codex puts them.
        hit = find(keys, old, lo, hunk.at_end or not (old or hunk.anchors), seen)
        if hit is not None:
            pos, tier = hit
            added = _reindent(lines, keys[pos:pos + len(old)]) if tier >= 2 else lines
            return pos, replace(hunk, lines=added), tier
    return describe(keys, hunk, number, total, lo, lo, show)


def _trimmed(lines: list[Line]):
    """The hunk's lines, then without blank old lines at either end (a blank line a model left
    between hunks, or at the top of a SEARCH), as codex and Aider retry."""
    yield lines
    old = [i for i, line in enumerate(lines) if line.op != "+"]
    first, last = 0, len(old)
    while first < last and not lines[old[first]].key.strip():
        first += 1
    while last > first and not lines[old[last - 1]].key.strip():
        last -= 1
    if 0 < last - first < len(old):
        dropped = set(old[:first] + old[last:])
        yield [line for i, line in enumerate(lines) if i not in dropped]


def _reindent(lines: list[Line], found: list[str]) -> list[Line]:
    """Added lines moved by the indentation the old lines were off by, when they were off by the
    same amount throughout (the model quoted a nested block from its own column)."""
    old = [line.key for line in lines if line.op != "+"]
    pairs = [(_indent(o), _indent(f)) for o, f in zip(old, found) if o.strip()]
    deeper = {f[: len(f) - len(o)] for o, f in pairs if f.endswith(o)} if all(f.endswith(o) for o, f in pairs) else set()
    shallower = {o[: len(o) - len(f)] for o, f in pairs if o.endswith(f)} if all(o.endswith(f) for o, f in pairs) else set()
    if len(deeper) == 1 and (extra := deeper.pop()):
        return [replace(line, text=extra + line.text) if line.op == "+" and line.text.strip() else line for line in lines]
    if len(shallower) == 1 and (extra := shallower.pop()):
        return [replace(line, text=line.text.removeprefix(extra)) if line.op == "+" else line for line in lines]
    return lines


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _ending(line: Line, literal_eol: bool, usual: str) -> str:
    if line.no_eol:
        return ""
    if literal_eol:
        return "\r\n" if line.cr else "\n"
    return usual
