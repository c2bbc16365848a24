"""edit_file and edit_files as the host registers them; their work (``edits.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import EditFileInput, EditFilesInput

EDIT_FILE = """Edit a text file in place: exact-text, regex or line edits, applied in order, all or nothing.
Byte-exact: CRLF line endings, a BOM, a missing final newline and non-UTF-8 bytes stay as they were.
Replace edit {oldText, newText}: oldText must occur exactly once, else NOT_UNIQUE naming the line of each occurrence; \
set limit (0 = all, N = first N), expectedOccurrences, or nearLine (pick the nearest) to allow several. \
Not found exactly, it is matched line by line ignoring indentation, and the file's indentation is kept. \
isRegex: ECMAScript regex (^ $ per line); newText may use $1 \\1 $& $<name> $$.
Line edit {type: "line", lineNumber, action: insert|replace|delete, content}: negative lineNumber counts from the end, \
0 inserts at the end.
Returns a summary and a unified diff. dryRun: true previews without writing ("(no changes)" if nothing would change)."""


EDIT_FILES = """Apply the same edits (as edit_file) to many files: paths and globs (src/**/*.py). \
Each file's result is reported inline as "path: OK ..." or "path: [error CODE] ...". \
atomic: true writes nothing anywhere unless every file succeeds. Use dryRun: true first: it previews every diff."""


TOOLS = [
    Tool("edit_file", EDIT_FILE, EditFileInput, "fsmcp_edit.edits:edit_file", DESTRUCTIVE, title="Edit a file"),
    Tool("edit_files", EDIT_FILES, EditFilesInput, "fsmcp_edit.edits:edit_files", DESTRUCTIVE, title="Edit many files"),
]
