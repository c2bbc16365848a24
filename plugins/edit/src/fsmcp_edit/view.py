"""Text with its line endings set aside: what edits match against, and where that lands.

Matching runs on ``norm``, the text with every CRLF made LF, so an ``oldText`` written with
``\\n`` finds its lines in a CRLF file. Offsets found there map back to the real text, and
new text takes the line ending of the region it replaces.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_NEWLINE = re.compile("\n")


def crlf_to_lf(text: str) -> str:
    return "\n".join(text.split("\r\n"))


class View:
    """Built for every edit of a sequence, so it scans the text only for what is asked."""

    def __init__(self, text: str):
        self.text = text
        # A lone "\r" search is a memchr; "\r\n" would walk the text character by character.
        self.norm = crlf_to_lf(text) if "\r" in text and "\r\n" in text else text
        self._crlf = len(text) - len(self.norm)
        self._lf: int | None = None
        self._crlf_at: list[int] | None = None
        self._newlines: list[int] | None = None

    @property
    def breaks(self) -> int:
        """Line breaks in the text, CRLF and LF alike."""
        if self._lf is None:
            self._lf = self.norm.count("\n")
        return self._lf

    @property
    def dominant_eol(self) -> str:
        return "\r\n" if self._crlf > self.breaks - self._crlf else "\n"

    # -- offsets ------------------------------------------------------------------------------

    def orig(self, i: int) -> int:
        """The offset in ``text`` of offset ``i`` in ``norm`` (a line end maps before its CR)."""
        if not self._crlf:
            return i
        if self._crlf == self.breaks:
            return i + self.norm.count("\n", 0, i)
        if self._crlf_at is None:
            self._crlf_at = [m.start() - k for k, m in enumerate(re.finditer("\r\n", self.text))]
        return i + bisect_left(self._crlf_at, i)

    @property
    def newlines(self) -> list[int]:
        """Offsets of every newline in ``norm``, built only when line numbers are looked up."""
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.norm)]
        return self._newlines

    # -- lines (1-based) ----------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        """Lines as an editor counts them: a final newline does not start another line."""
        n = self.breaks
        return n if not self.norm or self.norm.endswith("\n") else n + 1

    def line_of(self, i: int) -> int:
        if self._newlines is None:
            return self.norm.count("\n", 0, i) + 1
        return bisect_right(self._newlines, i - 1) + 1

    def line_start(self, line: int) -> int:
        """Offset in ``norm`` of the start of ``line``; ``line_count + 1`` gives the end."""
        if line <= 1:
            return 0
        if line > self.line_count:
            return len(self.norm)
        return self.newlines[line - 2] + 1

    def line_end(self, line: int) -> int:
        """Offset in ``norm`` just past ``line``'s content, before its newline."""
        if line - 1 < len(self.newlines):
            return self.newlines[line - 1]
        return len(self.norm)

    def from_end(self, number: int) -> int:
        """A 1-based line number from one that may count from the end (-1 is the last)."""
        return self.line_count + 1 + number if number < 0 else number

    # -- line endings -------------------------------------------------------------------------

    def eol_for(self, start: int, end: int) -> str:
        """The line ending new text takes when it replaces ``text[start:end]``.

        A region with line breaks gives its own prevailing ending; a region inside one line
        gives that line's ending; the last line without one gives the file's prevailing ending.
        """
        region = self.text[start:end]
        lf = region.count("\n")
        if lf:
            crlf = region.count("\r\n")
            if crlf * 2 == lf:
                return self.dominant_eol
            return "\r\n" if crlf * 2 > lf else "\n"
        j = self.text.find("\n", end)
        if j < 0:
            return self.dominant_eol
        return "\r\n" if j > 0 and self.text[j - 1] == "\r" else "\n"
