"""edit_file and edit_files as the host registers them; their work (``edits.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import EditFileInput, EditFilesInput

EDIT_FILE = """Edit a text file by exact text, regex or line number, all or nothing; returns a diff. \
Line endings, BOM and encoding stay. Whole file: write_file; diffs: patch_apply; many files: \
edit_files."""


EDIT_FILES = """edit_file's edits on many files, reporting each."""


TOOLS = [
    Tool("edit_file", EDIT_FILE, EditFileInput, "fsmcp_edit.edits:edit_file", DESTRUCTIVE),
    Tool("edit_files", EDIT_FILES, EditFilesInput, "fsmcp_edit.edits:edit_files", DESTRUCTIVE),
]
