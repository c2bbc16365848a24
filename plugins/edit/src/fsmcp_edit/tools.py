"""edit_file and edit_files as the host registers them; their work (``edits.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import EditFileInput, EditFilesInput

EDIT_FILE = """Change parts of a text file: exact-text, regex or line edits, in order, all or nothing; \
returns a unified diff. Bytes not edited stay as they were (line endings, BOM, encoding). \
A whole new content: write_file; a diff: patch_apply; many files: edit_files."""


EDIT_FILES = """The edits of edit_file, applied to each of many files; reports each file as \
"path: OK ..." or "path: [error CODE] ...". Preview with dryRun first."""


TOOLS = [
    Tool("edit_file", EDIT_FILE, EditFileInput, "fsmcp_edit.edits:edit_file", DESTRUCTIVE, title="Edit a file"),
    Tool("edit_files", EDIT_FILES, EditFilesInput, "fsmcp_edit.edits:edit_files", DESTRUCTIVE, title="Edit many files"),
]
