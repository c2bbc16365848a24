"""Whitespace-tolerant block matching, for an ``oldText`` copied from a differently indented place.

A block matches when each of its lines equals the file's line with leading and trailing
whitespace ignored. The replacement keeps the file's own bytes for every line the new text
leaves as it was, and indents the lines it adds or changes the way the file indents them; a
new text written without the block's indentation at all starts at the block's indentation.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from .view import View, crlf_to_lf


def split_block(text: str) -> tuple[list[str], bool]:
    """Lines of an ``oldText``/``newText``, and whether it ended with a newline."""
    lines = crlf_to_lf(text).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        return lines[:-1], True
    return lines, False


def find_blocks(view: View, old_lines: list[str], first: int, last: int | None) -> list[int]:
    """0-based start lines of every block within lines ``first..last`` (0-based; None: to the end)."""
    keys = [line.strip() for line in old_lines]
    anchor = next((j for j, k in enumerate(keys) if k), None)
    if anchor is None:
        return []
    lines = view.norm.split("\n")
    if view.norm.endswith("\n"):
        lines.pop()
    last = len(lines) - 1 if last is None else min(last, len(lines) - 1)
    found = []
    for i in range(first + anchor, last - len(keys) + anchor + 2):
        if lines[i].strip() != keys[anchor]:
            continue
        start = i - anchor
        if all(lines[start + j].strip() == k for j, k in enumerate(keys)):
            found.append(start)
    return found


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _count(indent: str, step: str) -> int | None:
    """How many ``step``s ``indent`` is, or None when it is not made of them."""
    k, rest = divmod(len(indent), len(step))
    return k if not rest and indent == step * k else None


class _Reindent:
    """Maps the new text's indentation into the file's, learnt from the matched lines."""

    def __init__(self, old_lines: list[str], file_lines: list[str]):
        self.old = [_indent(o) if o.strip() else None for o in old_lines]
        self.file = [_indent(f) for f in file_lines]
        self.pairs = sorted(
            ((o, f) for o, f in zip(self.old, self.file, strict=True) if o is not None),
            key=lambda p: len(p[0]),
            reverse=True,
        )
        self.add = self._common(lambda o, f: f[: len(f) - len(o)] if f.endswith(o) else None)
        self.strip = self._common(lambda o, f: o[: len(o) - len(f)] if o.endswith(f) else None)

        self.unit = self._unit()
        self.bare: tuple[str, str] | None = None

    def frame(self, new_lines: list[str]) -> None:
        """Notice a new text written without the block's indentation at all.

        New text moves by the difference between the file's indentation and the old text's;
        where the old text was copied deeper than the file and that would put a new line left of
        column 0, the new text was written in no block's frame: its first line takes the
        block's indentation and the others keep theirs relative to it. Where the old text and
        the file indent with different characters, the difference is counted in steps.
        """
        written = [_indent(line) for line in new_lines if line.strip()]
        anchor = next((j for j, o in enumerate(self.old) if o is not None), None)
        if anchor is None or not written:
            return
        old, file = self.old[anchor] or "", self.file[anchor]
        if self.strip:
            left = any(len(w) < len(self.strip) for w in written)
        elif self.unit is not None and (k_old := _count(old, self.unit[0])) is not None and (k_file := _count(file, self.unit[1])) is not None:
            left = k_old > k_file and any(len(w) // len(self.unit[0]) < k_old - k_file for w in written)
        else:
            left = False
        if left:
            self.bare = (written[0], file)

    def _common(self, shift) -> str | None:
        shifts = {shift(o, f) for o, f in self.pairs}
        return shifts.pop() if len(shifts) == 1 and None not in shifts else None

    def _unit(self) -> tuple[str, str] | None:
        """One indentation step in the new text's terms and in the file's (4 spaces, a tab)."""
        steps = sorted(set(self.pairs), key=lambda p: len(p[0]))
        for (o1, f1), (o2, f2) in zip(steps, steps[1:]):
            if o2.startswith(o1) and f2.startswith(f1) and len(o2) > len(o1) and len(f2) > len(f1):
                return o2[len(o1) :], f2[len(f1) :]
        return None

    def _steps(self, extra: str) -> int | None:
        if self.unit is None or not extra:
            return 0 if not extra else None
        return _count(extra, self.unit[0])

    def _convert(self, extra: str) -> str:
        k = self._steps(extra)
        return extra if k is None or self.unit is None else self.unit[1] * k

    def __call__(self, line: str, anchor: int) -> str:
        """``line`` of the new text, which stands where old line ``anchor`` stood."""
        if not line.strip():
            return ""
        indent = _indent(line)
        body = line[len(indent) :]
        if self.bare is not None:
            first, base = self.bare
            if indent.startswith(first):
                return base + self._convert(indent[len(first) :]) + body
            return base[: max(len(base) - (len(first) - len(indent)), 0)] + body
        # The line it replaces (or follows) is the best guide: it was matched in this very file.
        own = self.old[anchor]
        if own is not None and indent.startswith(own):
            return self.file[anchor] + self._convert(indent[len(own) :]) + body
        if self.add is not None:
            return self.add + line
        if self.strip is not None:
            keep = 0
            while keep < min(len(indent), len(self.strip)) and indent[keep] == self.strip[keep]:
                keep += 1
            return line[keep:]
        for old, new in self.pairs:
            if indent.startswith(old):
                return new + self._convert(indent[len(old) :]) + body
        return self._dedent(indent) + body

    def _dedent(self, indent: str) -> str:
        """A line less indented than every matched line: take steps off the shallowest one."""
        old, new = self.pairs[-1]
        k = self._steps(old[len(indent) :]) if old.startswith(indent) else None
        if k is None or self.unit is None or not new.endswith(self.unit[1] * k):
            return indent
        return new[: len(new) - len(self.unit[1]) * k]


def reindent_line_hit(view: View, start: int, old: str, new: str) -> str:
    """``new`` for an exact hit of a one-line ``old`` copied without the line's indentation.

    Such an ``old`` matches inside the indented line, so the new text's first line lands at the
    file's indentation and its later lines, written in the same frame as ``old``, are shifted
    by the same difference. A multi-line ``old`` that matched exactly already spelt out the
    file's indentation, and ``new`` with it.
    """
    if "\n" in old.rstrip("\n") or "\n" not in new.rstrip("\n"):
        return new
    line_start = view.norm.rfind("\n", 0, start) + 1
    indent = view.norm[line_start:start]
    if not indent or indent.strip(" \t"):
        return new
    first, *rest = new.split("\n")
    if any(line.startswith(indent) for line in rest if line.strip()):
        return new  # written in the file's frame already: shifting would indent it twice
    return "\n".join([first, *(indent + line if line.strip() else line for line in rest)])


def replace_block(view: View, start: int, old_lines: list[str], old_nl: bool, new_text: str) -> tuple[int, int, str]:
    """``(begin, end, replacement)`` in the real text for the block at 0-based line ``start``."""
    n = len(old_lines)
    begin = view.orig(view.line_start(start + 1))
    content_end = view.orig(view.line_end(start + n))
    end = view.orig(view.line_start(start + n + 1)) if old_nl else content_end
    file_lines, file_eols = [], []
    for k in range(start + 1, start + n + 1):
        a, b = view.orig(view.line_start(k)), view.orig(view.line_end(k))
        file_lines.append(view.text[a:b])
        file_eols.append(view.text[b : view.orig(view.line_start(k + 1))])
    eol = view.eol_for(begin, end)
    new_lines, new_nl = split_block(new_text)
    reindent = _Reindent(old_lines, [crlf_to_lf(f) for f in file_lines])
    reindent.frame(new_lines)
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            # A line the new text leaves as it was keeps the file's bytes, indentation and all.
            out.extend((file_lines[i], file_eols[i] or eol) for i in range(i1, i2))
        elif tag != "delete":
            for j in range(j1, j2):
                anchor = min(i1 + (j - j1), i2 - 1) if i2 > i1 else max(i1 - 1, 0)
                out.append((reindent(new_lines[j], anchor), eol))
    pieces = []
    for k, (line, line_eol) in enumerate(out):
        pieces.append(line)
        if k < len(out) - 1 or new_nl:
            pieces.append(line_eol)
    return begin, end, "".join(pieces)
