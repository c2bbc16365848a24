"""patch_apply against what an attack pass found: rules a patch must keep as the single-file
tools keep them, texts it must not half-read, and dry runs that answer as the real call does."""

from __future__ import annotations

import pytest
from fsmcp.testing import ToolCalls, serve_stdio, tree_of

pytestmark = pytest.mark.anyio


def _allow_write(tmp_path):
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.secrets]\nallow_write = true\n")
    return ["--config", str(config), "--journal", str(tmp_path / "journal")]


async def test_a_patch_copies_moves_or_renames_nothing_into_a_protected_name_even_under_allow_write(tmp_path, root):
    # copy_file and move_file refuse a protected destination, allow_write or not: a patch is
    # no way around that, in a dry run or a real one, in either format.
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    texts = [
        "diff --git a/a.txt b/id_dsa\nsimilarity index 100%\ncopy from a.txt\ncopy to id_dsa\n",
        "diff --git a/a.txt b/id_dsa\nsimilarity index 100%\nrename from a.txt\nrename to id_dsa\n",
        "*** Begin Patch\n*** Update File: b.txt\n*** Move to: id_rsa\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: b.txt\n*** Move to: id_ed25519\n@@\n-b\n+c\n*** End Patch\n",
    ]
    before = tree_of(root)
    async with serve_stdio(str(root), *_allow_write(tmp_path), cwd=root) as client:
        s = ToolCalls(client)
        await s.fail("copy_file", "ACCESS_DENIED", source="a.txt", destination="id_dsa")  # the rule kept
        for text in texts:
            for dry in (True, False):
                await s.fail("patch_apply", "ACCESS_DENIED", patch=text, dryRun=dry)
    assert tree_of(root) == before

