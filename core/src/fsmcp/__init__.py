"""fsmcp: a small MCP host whose file tools are all plugins.

A plugin imports what it needs from here and nowhere else::

    from fsmcp import hookimpl, Tool, ToolInput, ToolError, ErrorCode, READ_ONLY
"""

import importlib
from typing import TYPE_CHECKING, Any


__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)

_EXPORTS = {
    "audit_note": ("audit", "note"),
    "fair_shares": ("budget", "fair_shares"),
    "number_runs": ("budget", "number_runs"),
    "truncate": ("budget", "truncate"),
    "Change": ("change", "Change"),
    "options_error": ("config", "options_error"),
    "plugin_options": ("config", "plugin_options"),
    "Settings": ("config", "Settings"),
    "Refusal": ("consent", "Refusal"),
    "ToolContext": ("context", "ToolContext"),
    "ErrorCode": ("errors", "ErrorCode"),
    "ToolError": ("errors", "ToolError"),
    "Entry": ("fs", "Entry"),
    "FileSystem": ("fs", "FileSystem"),
    "kind_of": ("fs", "kind_of"),
    "start_program": ("programs", "start_program"),
    "Snapshot": ("snapshot", "Snapshot"),
    "ExcludeGlobs": ("globs", "ExcludeGlobs"),
    "GlobFilter": ("globs", "GlobFilter"),
    "compile_globs": ("globs", "compile_globs"),
    "ExpectedVersion": ("guard", "ExpectedVersion"),
    "expect_version": ("guard", "expect_version"),
    "version": ("guard", "version"),
    "hookimpl": ("hooks", "hookimpl"),
    "hookspec": ("hooks", "hookspec"),
    "describe_invalid": ("invalid", "describe_invalid"),
    "JournalEntry": ("journal_view", "JournalEntry"),
    "JournalRecord": ("journal_view", "JournalRecord"),
    "JournalView": ("journal_view", "JournalView"),
    "json_text": ("jsontext", "dumps"),
    "shown_name": ("names", "shown"),
    "protected_note": ("protected", "protected_note"),
    "lines_withheld": ("protected", "lines_withheld"),
    "Blob": ("results", "Blob"),
    "Text": ("results", "Text"),
    "ToolResult": ("results", "ToolResult"),
    "Access": ("roots", "Access"),
    "ResolvedPath": ("roots", "ResolvedPath"),
    "Root": ("roots", "Root"),
    "RootSet": ("roots", "RootSet"),
    "ToolCall": ("runner", "ToolCall"),
    "RootsView": ("roots", "RootsView"),
    "CREATES": ("tools", "CREATES"),
    "DESTRUCTIVE": ("tools", "DESTRUCTIVE"),
    "OVERWRITES": ("tools", "OVERWRITES"),
    "READ_ONLY": ("tools", "READ_ONLY"),
    "Annotations": ("tools", "Annotations"),
    "Tool": ("tools", "Tool"),
    "ToolInput": ("tools", "ToolInput"),
}
"""Each public name and the module it lives in, imported at its first use: a start that needs
none of them (the tool list from the cache) loads none of their modules."""

__all__ = [*_EXPORTS, "__version__"]


if TYPE_CHECKING:
    from .audit import note as audit_note
    from .budget import fair_shares, number_runs, truncate
    from .change import Change
    from .config import Settings, options_error, plugin_options
    from .consent import Refusal
    from .context import ToolContext
    from .errors import ErrorCode, ToolError
    from .fs import Entry, FileSystem, kind_of
    from .programs import start_program
    from .snapshot import Snapshot
    from .globs import ExcludeGlobs, GlobFilter, compile_globs
    from .guard import ExpectedVersion, expect_version, version
    from .hooks import hookimpl, hookspec
    from .invalid import describe_invalid
    from .journal_view import JournalEntry, JournalRecord, JournalView
    from .jsontext import dumps as json_text
    from .names import shown as shown_name
    from .protected import lines_withheld, protected_note
    from .results import Blob, Text, ToolResult
    from .roots import Access, ResolvedPath, Root, RootSet, RootsView
    from .runner import ToolCall
    from .tools import CREATES, DESTRUCTIVE, OVERWRITES, READ_ONLY, Annotations, Tool, ToolInput


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'fsmcp' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value
    return value
