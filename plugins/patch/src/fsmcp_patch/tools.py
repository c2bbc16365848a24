"""patch_apply as the host registers it; its work (``patch_apply.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import PatchApplyInput

DESCRIPTION = (
    "Apply a unified diff to the files it names, all or nothing. Hunk line numbers are hints: ' ' and '-' lines "
    "must match exactly (line endings aside), nearest first; else PATCH_FAILED shows the closest lines. Git "
    "renames and copies are followed; line endings, BOM and a missing final newline are kept."
)


TOOLS = [
    Tool("patch_apply", DESCRIPTION, PatchApplyInput, "fsmcp_patch.patch_apply:patch_apply", DESTRUCTIVE, title="Apply a unified diff"),
]
