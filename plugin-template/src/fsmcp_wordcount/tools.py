"""word_count: the lines, words, bytes and characters of a text file, like ``wc``."""

from __future__ import annotations

import codecs
import io
from typing import ClassVar

from pydantic import BaseModel, Field

from fsmcp import READ_ONLY, Tool, ToolContext, ToolInput, ToolResult

CHUNK = 64 * 1024
# Each progress report is a round trip to the event loop, so a big file reports every few MiB.
PROGRESS_EVERY = 4 * 1024 * 1024


class WordCountInput(ToolInput):
    path: str = Field(
        description="The file to count. A relative path resolves against the workspace (the first allowed directory)."
    )

    aliases: ClassVar[dict[str, str]] = {"file": "path"}


class WordCountOutput(BaseModel):
    """The same counts as structuredContent, for clients that read it (and the json format)."""

    path: str
    lines: int
    words: int
    bytes: int
    characters: int


class Tally:
    """Counts fed one chunk at a time, so the file never has to fit in memory."""

    def __init__(self) -> None:
        self.lines = 0
        self.words = 0
        self.size = 0
        self.characters = 0
        self._in_word = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def add(self, chunk: bytes, *, final: bool = False) -> None:
        self.size += len(chunk)
        self.lines += chunk.count(b"\n")
        # The incremental decoder holds back a character split across two chunks.
        text = self._decoder.decode(chunk, final)
        if not text:
            return
        self.characters += len(text)
        self.words += len(text.split())
        if self._in_word and not text[0].isspace():
            self.words -= 1  # the word began in the previous chunk and was counted there
        self._in_word = not text[-1].isspace()


def word_count(args: WordCountInput, ctx: ToolContext) -> ToolResult:
    path = ctx.fs.resolve(args.path)
    tally = Tally()
    with ctx.fs.open_read(path) as fh:
        total = fh.seek(0, io.SEEK_END)
        fh.seek(0)
        next_report = PROGRESS_EVERY
        while chunk := fh.read(CHUNK):
            ctx.check_cancelled()
            tally.add(chunk)
            if tally.size >= next_report:
                ctx.progress(tally.size, total, f"counted {tally.size} of {total} bytes")
                next_report += PROGRESS_EVERY
        tally.add(b"", final=True)
    text = (
        f"{path}: {_count(tally.lines, 'line')}, {_count(tally.words, 'word')}, "
        f"{_count(tally.size, 'byte')}, {_count(tally.characters, 'character')}"
    )
    data = {"path": str(path), "lines": tally.lines, "words": tally.words, "bytes": tally.size, "characters": tally.characters}
    return ToolResult.text(text, data)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


TOOLS = [
    Tool(
        name="word_count",
        title="Word count",
        description=(
            "Count the lines, words, bytes and characters of a text file, like wc. Lines are "
            "newline characters; words are runs of non-whitespace; characters are UTF-8 "
            "characters, each invalid byte sequence counting as one. Any file size works: "
            "the file is read in chunks. Returns one line: "
            "'<path>: N lines, N words, N bytes, N characters'."
        ),
        input_model=WordCountInput,
        output_model=WordCountOutput,
        function=word_count,
        annotations=READ_ONLY,
    ),
]
