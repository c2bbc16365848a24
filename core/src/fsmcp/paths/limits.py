"""The system's path length limit, held by every path a tool is given, whatever the policy."""

from __future__ import annotations

import os
from pathlib import Path

from ..api.errors import ErrorCode, ToolError


def _path_max() -> int:
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096


PATH_MAX = _path_max()
"""Bytes of a path with its terminating NUL (4,096 on Linux)."""


def check_length(path: Path) -> None:
    """Refuse a path other programs could not name, though the descriptor walk could reach it.

    ``write_file`` walks one component at a time, so it could make a file whose path ripgrep,
    ``run_command`` or any other program is then refused with ENAMETOOLONG.
    """
    text = str(path)
    # UTF-8 takes at most 4 bytes a character (an undecodable byte held as a surrogate, 1): a
    # path this short is under the limit without being encoded, as nearly every path is.
    if len(text) * 4 < PATH_MAX:
        return
    size = len(os.fsencode(text))
    if size >= PATH_MAX:
        shown = text
        shown = shown[:60] + "..." + shown[-20:] if len(shown) > 90 else shown
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"the path {shown} is {size:,} bytes long, past the system's limit of {PATH_MAX - 1:,} (PATH_MAX); use a shorter path",
        )
