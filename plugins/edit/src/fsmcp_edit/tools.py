"""edit_file and edit_files as the host registers them; each one's module loads at its first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import EditFileInput, EditFilesInput

EDIT_FILE = """Edit a text file by exact text, regex or line number, all or nothing; returns a diff. \
Line endings, BOM and encoding stay. Whole file: write_file; diffs: patch_apply; many files: \
edit_files."""


EDIT_FILES = """edit_file's edits on many files, reporting each."""


TOOLS = [
    Tool("edit_file", EDIT_FILE, EditFileInput, "fsmcp_edit.edit_file:edit_file", DESTRUCTIVE),
    Tool("edit_files", EDIT_FILES, EditFilesInput, "fsmcp_edit.edit_files:edit_files", DESTRUCTIVE),
]
