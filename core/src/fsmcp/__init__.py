"""fsmcp: a small MCP host whose file tools are all plugins.

A plugin imports what it needs from here and nowhere else::

    from fsmcp import hookimpl, Tool, ToolInput, ToolError, ErrorCode, READ_ONLY
"""

import importlib
from typing import TYPE_CHECKING, Any


from .api import __version__  # noqa: F401  (the distribution reads it there: core/pyproject.toml)

_EXPORTS = {
    "audit_note": ("api.audit", "note"),
    "fair_shares": ("api.tools", "fair_shares"),
    "number_runs": ("api.tools", "number_runs"),
    "truncate": ("api.tools", "truncate"),
    "Change": ("paths.change", "Change"),
    "options_error": ("api.config", "options_error"),
    "plugin_options": ("api.config", "plugin_options"),
    "Settings": ("api.config", "Settings"),
    "Refusal": ("paths.consent", "Refusal"),
    "ToolContext": ("run.context", "ToolContext"),
    "ErrorCode": ("api.errors", "ErrorCode"),
    "ToolError": ("api.errors", "ToolError"),
    "Entry": ("paths.fs", "Entry"),
    "FileSystem": ("paths.fs", "FileSystem"),
    "kind_of": ("paths.fs", "kind_of"),
    "start_program": ("sandbox.programs", "start_program"),
    "ProgramView": ("sandbox.view", "ProgramView"),
    "commit_view": ("sandbox.commit", "commit"),
    "Snapshot": ("paths.snapshot", "Snapshot"),
    "ExcludeGlobs": ("paths.globs", "ExcludeGlobs"),
    "GlobFilter": ("paths.globs", "GlobFilter"),
    "compile_globs": ("paths.globs", "compile_globs"),
    "ExpectedVersion": ("paths.guard", "ExpectedVersion"),
    "expect_version": ("paths.guard", "expect_version"),
    "version": ("paths.guard", "version"),
    "hookimpl": ("api.hooks", "hookimpl"),
    "hookspec": ("api.hooks", "hookspec"),
    "describe_invalid": ("api.invalid", "describe_invalid"),
    "JournalEntry": ("api.journal", "JournalEntry"),
    "JournalRecord": ("api.journal", "JournalRecord"),
    "JournalView": ("api.journal", "JournalView"),
    "json_text": ("api.jsontext", "dumps"),
    "shown_name": ("paths.roots", "shown"),
    "protected_note": ("paths.protected", "protected_note"),
    "lines_withheld": ("paths.protected", "lines_withheld"),
    "Blob": ("api.tools", "Blob"),
    "Text": ("api.tools", "Text"),
    "ToolResult": ("api.tools", "ToolResult"),
    "Access": ("paths.roots", "Access"),
    "ResolvedPath": ("paths.roots", "ResolvedPath"),
    "Root": ("paths.roots", "Root"),
    "RootSet": ("paths.roots", "RootSet"),
    "ToolCall": ("run.runner", "ToolCall"),
    "RootsView": ("paths.roots", "RootsView"),
    "CREATES": ("api.tools", "CREATES"),
    "DESTRUCTIVE": ("api.tools", "DESTRUCTIVE"),
    "OVERWRITES": ("api.tools", "OVERWRITES"),
    "READ_ONLY": ("api.tools", "READ_ONLY"),
    "Annotations": ("api.tools", "Annotations"),
    "Tool": ("api.tools", "Tool"),
    "ToolInput": ("api.tools", "ToolInput"),
}
"""Each public name and the module it lives in, imported at its first use: a start that needs
none of them (the tool list from the cache) loads none of their modules."""

__all__ = [*_EXPORTS, "__version__"]


if TYPE_CHECKING:
    from .api.audit import note as audit_note
    from .paths.change import Change
    from .api.config import Settings, options_error, plugin_options
    from .paths.consent import Refusal
    from .run.context import ToolContext
    from .api.errors import ErrorCode, ToolError
    from .paths.fs import Entry, FileSystem, kind_of
    from .sandbox.programs import start_program
    from .sandbox.view import ProgramView
    from .sandbox.commit import commit as commit_view
    from .paths.snapshot import Snapshot
    from .paths.globs import ExcludeGlobs, GlobFilter, compile_globs
    from .paths.guard import ExpectedVersion, expect_version, version
    from .api.hooks import hookimpl, hookspec
    from .api.invalid import describe_invalid
    from .api.journal import JournalEntry, JournalRecord, JournalView
    from .api.jsontext import dumps as json_text
    from .paths.protected import lines_withheld, protected_note
    from .paths.roots import Access, ResolvedPath, Root, RootSet, RootsView
    from .paths.roots import shown as shown_name
    from .run.runner import ToolCall
    from .api.tools import CREATES, DESTRUCTIVE, OVERWRITES, READ_ONLY, Annotations, Blob, Text, Tool, ToolInput, ToolResult, fair_shares, number_runs, truncate


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'fsmcp' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value
    return value
