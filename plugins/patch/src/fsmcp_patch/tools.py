"""patch_apply as the host registers it; its work (``patch_apply.py``) loads at the first call."""

from __future__ import annotations

from fsmcp import DESTRUCTIVE, Tool

from .models import PatchApplyInput

DESCRIPTION = (
    "Apply a patch to the files it names, all or nothing. "
    "Unified diff (git diff): line numbers are hints. "
    "apply_patch (*** Begin Patch): Add/Delete/Update File, Move to, @@ hunks found by context. "
    "SEARCH/REPLACE blocks, each after its file's path; empty SEARCH creates the file."
)


TOOLS = [
    Tool("patch_apply", DESCRIPTION, PatchApplyInput, "fsmcp_patch.patch_apply:patch_apply", DESTRUCTIVE, title="Apply a patch"),
]
