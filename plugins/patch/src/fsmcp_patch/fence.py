"""The diff inside a markdown fence, when a model wrapped it in one."""

from __future__ import annotations

import re

_OPEN = re.compile(r"^(`{3,}|~{3,})[^`]*$")


def unfence(text: str) -> str:
    """The fenced blocks that hold a diff, joined; the text itself when none does.

    A diff's own lines start with a space, ``+``, ``-``, ``@`` or a header word, never with a
    backtick or tilde, so a fence line cannot be part of the diff. Blocks without a hunk or
    file header (an example of the file, prose) are left out; an unclosed fence runs to the end,
    as a reply cut short leaves it.
    """
    blocks: list[list[str]] = []
    block: list[str] | None = None
    closing: re.Pattern[str] | None = None
    for line in text.split("\n"):
        bare = line.rstrip("\r")
        if block is None:
            opened = _OPEN.match(bare)
            if opened:
                fence = opened.group(1)
                closing = re.compile(re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*")
                block = []
        elif closing is not None and closing.fullmatch(bare):
            blocks.append(block)
            block = None
        else:
            block.append(line)
    if block is not None:
        blocks.append(block)
    diffs = [b for b in blocks if any(line.startswith(("@@", "--- ", "diff ")) for line in b)]
    if not diffs:
        return text
    return "".join("\n".join(b) + "\n" for b in diffs)
