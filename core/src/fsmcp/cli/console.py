"""What fsmcp says to people: lines on stderr, in one style.

``fsmcp: error: …`` (the start stops), ``fsmcp: warning: …`` (it goes on without something),
``fsmcp: …`` (what it is doing). stdout belongs to the protocol and to results.

Anything with something to tell the operator, the host or a plugin, logs it:
``logging.getLogger(__name__).warning("…")``, never ``print``. The commands route every log
record through ``configure``, so the style and ``--log-level`` hold for all of them; a record
from outside fsmcp (the SDK, uvicorn) is marked with its logger's name.
"""

from __future__ import annotations

import logging
import sys

PREFIX = "fsmcp: "


class _Style(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        if not record.name.startswith("fsmcp"):
            text = f"{record.name}: {text}"
        if record.levelno == logging.INFO:
            return PREFIX + text
        return f"{PREFIX}{record.levelname.lower()}: {text}"


def configure(level: str) -> None:
    """Send every log record to stderr in fsmcp's style, from ``level`` up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Style())
    logging.basicConfig(level=level, handlers=[handler])


def say(text: str) -> None:
    """A line the operator always sees, whatever the log level (what the server serves, and where)."""
    print(PREFIX + text, file=sys.stderr)


def error(problem: object) -> None:
    """The line for a mistake that stops the command; the caller exits with status 2."""
    print(f"{PREFIX}error: {problem}", file=sys.stderr)
