"""Stable error codes and the one exception every tool raises to fail."""

from __future__ import annotations

from enum import Enum
from typing import Any


class HostError(Exception):
    """The server cannot start as configured; the message says what to change."""


class ErrorCode(str, Enum):
    """The codes of CONTRACT §4. A failure's text always leads with one of these."""

    INVALID_PARAMS = "INVALID_PARAMS"
    ACCESS_DENIED = "ACCESS_DENIED"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    NOT_FILE = "NOT_FILE"
    NOT_DIRECTORY = "NOT_DIRECTORY"
    DIRECTORY_NOT_EMPTY = "DIRECTORY_NOT_EMPTY"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    PATTERN_NOT_FOUND = "PATTERN_NOT_FOUND"
    NOT_UNIQUE = "NOT_UNIQUE"
    EDIT_CONFLICT = "EDIT_CONFLICT"
    PATCH_FAILED = "PATCH_FAILED"
    READ_ONLY = "READ_ONLY"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    COMMAND_NOT_ALLOWED = "COMMAND_NOT_ALLOWED"
    TIMEOUT = "TIMEOUT"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ToolError(Exception):
    """A tool failure the model should see: becomes an ``isError`` result, never a protocol error.

    ``message`` says what went wrong and what to do next; ``details`` carries machine-readable
    facts (the json formatter sends them, the text formatter leaves them out).
    """

    def __init__(self, code: ErrorCode, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}


class OffLoop(Exception):
    """A quick tool's call on the event loop met more work than a moment's (:data:`fsmcp.paths.fs.QUICK_BYTES`
    of files, a listing, a wait for a lock): the host runs it again in a worker thread."""
