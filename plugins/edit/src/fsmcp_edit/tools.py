"""edit_file and edit_files as the host registers them; their work (``edits.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import EditFileInput, EditFilesInput

EDIT_FILE = """Change parts of a text file by exact text, regex or line number, in order, all or nothing; \
returns a unified diff. Bytes not edited stay (line endings, BOM, encoding). \
Whole new content: write_file; a diff: patch_apply; many files: edit_files."""


EDIT_FILES = """edit_file's edits on many files, reporting each file. Preview with dryRun first."""


TOOLS = [
    Tool("edit_file", EDIT_FILE, EditFileInput, "fsmcp_edit.edits:edit_file", DESTRUCTIVE, title="Edit a file"),
    Tool("edit_files", EDIT_FILES, EditFilesInput, "fsmcp_edit.edits:edit_files", DESTRUCTIVE, title="Edit many files"),
]
