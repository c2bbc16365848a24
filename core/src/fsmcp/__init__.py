"""fsmcp: a small MCP host whose file tools are all plugins.

A plugin imports what it needs from here and nowhere else::

    from fsmcp import hookimpl, Tool, ToolInput, ToolError, ErrorCode, READ_ONLY
"""

from .audit import note as audit_note
from .budget import fair_shares, number_runs, truncate
from .change import Change
from .config import options_error, plugin_options
from .consent import Refusal
from .context import ToolContext
from .errors import ErrorCode, ToolError
from .fs import Entry, FileSystem, kind_of
from .programs import start_program
from .snapshot import Snapshot
from .globs import GlobFilter, compile_globs

from .guard import ExpectedVersion, expect_version, version
from .hooks import hookimpl, hookspec
from .jsontext import dumps as json_text
from .names import shown as shown_name
from .results import Blob, Text, ToolResult
from .roots import Access, ResolvedPath, Root, RootSet
from .tools import CREATES, DESTRUCTIVE, OVERWRITES, READ_ONLY, Annotations, Tool, ToolInput

__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)

__all__ = [
    "CREATES",
    "DESTRUCTIVE",
    "OVERWRITES",
    "READ_ONLY",
    "Access",
    "Annotations",
    "Blob",
    "Change",
    "Entry",
    "ExpectedVersion",
    "ErrorCode",
    "FileSystem",
    "GlobFilter",
    "Refusal",
    "ResolvedPath",
    "Root",
    "RootSet",
    "Snapshot",
    "Text",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolInput",
    "ToolResult",
    "compile_globs",
    "expect_version",
    "audit_note",
    "fair_shares",
    "number_runs",
    "options_error",
    "plugin_options",
    "start_program",
    "hookimpl",
    "kind_of",
    "hookspec",
    "json_text",
    "shown_name",
    "truncate",
    "version",
    "__version__",
]
