"""patch_apply as the host registers it; its work (``patch_apply.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import PatchApplyInput

DESCRIPTION = (
    "Apply a unified diff (diff -u, diff -ruN or git diff output, optionally inside a markdown fence) to the "
    "files it names, all or nothing: nothing is written unless every hunk of every file applies. "
    "'--- /dev/null' creates a file, '+++ /dev/null' deletes one, git renames and copies are followed. "
    "Hunk line numbers are hints: a hunk's ' ' and '-' lines must match the file exactly (line endings aside) "
    "and are searched for outward from the hinted line. Names in the diff lose their a/ b/ prefixes and are "
    "relative to the workspace, or to path when it is a directory; for a one-file diff path may name the file. "
    "On a mismatch, PATCH_FAILED shows the expected lines beside the closest lines found. "
    "CRLF line endings, a BOM and a missing final newline are kept."
)


TOOLS = [
    Tool("patch_apply", DESCRIPTION, PatchApplyInput, "fsmcp_patch.patch_apply:patch_apply", DESTRUCTIVE, title="Apply a unified diff"),
]
