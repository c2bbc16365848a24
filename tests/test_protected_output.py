"""With ``allow_write = true``, a protected file is changed but never shown: no diff, hint,
failed hunk, dry run, batch report or error carries one of its lines.

Every route runs twice over stdio with the real server: the file protected (``allow_write``)
and the same file with the policy off (``--disable secrets``). Off, the marker appears in the
result, which proves the route shows the file's lines and the test can see a leak; on, the
marker is nowhere in the whole result (text, structuredContent, error), the change still
happens, and the result says what happened. The race at the end runs protected only: its
control is the same run on the code before the host read a write-checked path as a read
(10 and 26 leaks in 300 edits, two runs).
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

MARK = "s3cr3t-MARK-91d2"
ENV = f"# database\nDB_HOST=db.internal\nDB_PASSWORD={MARK}\nDB_USER=app\nDB_NAME=shop\n"
WITHHELD = "protected by the secrets policy"
POLICY = pytest.mark.parametrize("policy", ["protected", "plain"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / ".env").write_text(ENV)
    (root / ".env.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "source": f"print('{MARK}')", "metadata": {}, "outputs": [], "execution_count": None}],
        "metadata": {"kernelspec": MARK}, "nbformat": 4, "nbformat_minor": 5,
    }))  # fmt: skip
    (root / "README.md").write_text("public\n")
    return root


class Calls:
    """A client whose every whole result (content, structuredContent, isError) is kept as JSON."""

    def __init__(self, client):
        self.client = client
        self.seen: list[str] = []

    async def call(self, name: str, **args) -> tuple[bool, str]:
        result = await self.client.call_tool(name, args)
        self.seen.append(result.model_dump_json())
        return bool(result.is_error), text_of(result)

    async def ok(self, name: str, **args) -> str:
        is_error, text = await self.call(name, **args)
        assert not is_error, text
        return text

    async def fail(self, name: str, code: str, **args) -> str:
        is_error, text = await self.call(name, **args)
        assert is_error and (text.startswith(f"{code}: ") or text.startswith(f'{{"ok":false,"error":{{"code":"{code}"')), text
        return text

    def leaked(self) -> bool:
        return any(MARK in seen for seen in self.seen)


@asynccontextmanager
async def server(tmp_path: Path, root: Path, policy: str, *args: str):
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.secrets]\nallow_write = true\n")
    extra = ["--disable", "secrets"] if policy == "plain" else []
    async with serve_stdio(str(root), "--config", str(config), "--journal", str(tmp_path / "journal"), *extra, *args) as client:
        yield Calls(client)


def check(s: Calls, policy: str, *said: str) -> None:
    """Protected: no marker anywhere, and each text says the lines were left out. Plain: the marker shows."""
    if policy == "protected":
        assert not s.leaked(), "\n".join(x for x in s.seen if MARK in x)
        for text in said:
            assert WITHHELD in text, text
    else:
        assert s.leaked(), s.seen


# -- edit_file --------------------------------------------------------------------------------


@POLICY
async def test_edit_file_diff(tmp_path, root, policy):
    async with server(tmp_path, root, policy) as s:
        text = await s.ok("edit_file", path=".env", edits=[{"oldText": "DB_USER=app", "newText": "DB_USER=web"}])
    check(s, policy, text)
    assert (root / ".env").read_text() == ENV.replace("DB_USER=app", "DB_USER=web")
    assert "+1 -1 lines" in text and ".env" in text


@POLICY
async def test_edit_file_regex_moves_the_secret_into_added_lines(tmp_path, root, policy):
    async with server(tmp_path, root, policy) as s:
        text = await s.ok("edit_file", path=".env", edits=[{"oldText": "^DB_PASSWORD=(.*)$", "newText": "DB_PASS=$1", "isRegex": True}])
    check(s, policy, text)
    assert f"DB_PASS={MARK}\n" in (root / ".env").read_text()


@POLICY
async def test_edit_file_near_miss_hint(tmp_path, root, policy):
    async with server(tmp_path, root, policy) as s:
        text = await s.fail("edit_file", "PATTERN_NOT_FOUND", path=".env", edits=[{"oldText": "DB_PASSWORD=guess\nDB_USER=app", "newText": "x"}])
    check(s, policy, text)
    assert "oldText was not found" in text and (root / ".env").read_text() == ENV


@POLICY
async def test_edit_file_in_a_batch_of_edits(tmp_path, root, policy):
    async with server(tmp_path, root, policy) as s:
        text = await s.fail(
            "edit_file", "PATTERN_NOT_FOUND", path=".env",
            edits=[{"oldText": "DB_USER=app", "newText": "DB_USER=web"}, {"oldText": "DB_HOST=db.internal\nDB_PASSWORD=hunter2", "newText": "x"}],
        )  # fmt: skip
    check(s, policy, text)
    assert "edit 2 of 2" in text and (root / ".env").read_text() == ENV


# -- edit_files -------------------------------------------------------------------------------


@POLICY
async def test_edit_files(tmp_path, root, policy):
    (root / "b.txt").write_text("DB_USER=app\n")
    async with server(tmp_path, root, policy) as s:
        text = await s.ok("edit_files", paths=[".env", "b.txt"], edits=[{"oldText": "DB_USER=app", "newText": "DB_USER=web"}])
        hint = await s.ok("edit_files", paths=[".env", "b.txt"], edits=[{"oldText": "DB_PASSWORD=x\nDB_USER=web", "newText": "y"}])
        atomic = await s.fail(
            "edit_files", "PATTERN_NOT_FOUND", paths=[".env", "b.txt"], atomic=True,
            edits=[{"oldText": "DB_PASSWORD=x\nDB_USER=web", "newText": "y"}],
        )  # fmt: skip
    check(s, policy, text, hint, atomic)
    assert "DB_USER=web" in (root / ".env").read_text() and (root / "b.txt").read_text() == "DB_USER=web\n"
    assert "2 edited" in text and "-DB_USER=app" in text  # the plain file's diff is still shown


# -- patch_apply ------------------------------------------------------------------------------


def _patch(old_user: str, new_user: str, password: str = MARK) -> str:
    return f"--- a/.env\n+++ b/.env\n@@ -2,3 +2,3 @@\n DB_HOST=db.internal\n DB_PASSWORD={password}\n-{old_user}\n+{new_user}\n"


@POLICY
async def test_patch_apply_failed_hunk(tmp_path, root, policy):
    async with server(tmp_path, root, policy) as s:
        text = await s.fail("patch_apply", "PATCH_FAILED", patch=_patch("DB_USER=app", "DB_USER=web", password="guess"))
    check(s, policy, text)
    assert "hunk 1 of 1" in text and (root / ".env").read_text() == ENV


@POLICY
async def test_patch_apply_already_applied_note(tmp_path, root, policy):
    # The hunk's own lines are the client's; that they are "already in the file" at line N would
    # confirm a guessed secret, and the found lines would show it.
    async with server(tmp_path, root, policy) as s:
        text = await s.fail("patch_apply", "PATCH_FAILED", patch=_patch("DB_USER=nobody", "DB_USER=app", password="guess"))
    check(s, policy, text)


@POLICY
async def test_patch_apply_applies_and_dry_runs(tmp_path, root, policy):
    # Context lines the file has are the client's own words here: no marker in the patch.
    patch = "--- a/.env\n+++ b/.env\n@@ -4,2 +4,2 @@\n-DB_USER=app\n+DB_USER=web\n DB_NAME=shop\n"
    async with server(tmp_path, root, policy) as s:
        dry = await s.ok("patch_apply", patch=patch, dryRun=True)
        text = await s.ok("patch_apply", patch=patch)
        failed = await s.fail("patch_apply", "PATCH_FAILED", patch=patch)
    if policy == "protected":
        assert not s.leaked() and WITHHELD in failed
    assert "DB_USER=web" in (root / ".env").read_text() and "1 hunk" in dry and "patched" in text


# -- batch_operations -------------------------------------------------------------------------


@POLICY
async def test_batch_operations(tmp_path, root, policy):
    failing_edit = {"path": ".env", "edits": [{"oldText": "DB_PASSWORD=x\nDB_NAME=store", "newText": "y"}]}
    failing_patch = {"patch": _patch("DB_USER=app", "DB_USER=web", password="guess")}
    steps = [
        {"tool": "edit_file", "arguments": {"path": ".env", "edits": [{"oldText": "DB_NAME=shop", "newText": "DB_NAME=store"}]}},
        {"tool": "edit_file", "arguments": failing_edit, "continueOnError": True},
        {"tool": "patch_apply", "arguments": failing_patch, "continueOnError": True},
    ]
    # Transactional: the patch's own dry run, which names the files to save, is what fails.
    transaction = [
        {"tool": "edit_file", "arguments": {"path": "README.md", "edits": [{"oldText": "public", "newText": "open"}]}},
        {"tool": "patch_apply", "arguments": failing_patch},
    ]
    async with server(tmp_path, root, policy) as s:
        text = await s.ok("batch_operations", operations=steps)
        rolled = await s.fail("batch_operations", "PATCH_FAILED", operations=transaction, transactional=True)
    check(s, policy, text, rolled)
    assert "DB_NAME=store" in (root / ".env").read_text() and (root / "README.md").read_text() == "public\n"
    assert "1 ok, 2 failed" in text and "Rolled back" in rolled


# -- edit_notebook ----------------------------------------------------------------------------


@POLICY
async def test_edit_notebook_invalid_result(tmp_path, root, policy):
    # The notebook's own metadata is invalid; nbformat's message quotes the offending value.
    async with server(tmp_path, root, policy) as s:
        text = await s.fail("edit_notebook", "INVALID_PARAMS", path=".env.ipynb", edits=[{"op": "insert", "source": "x = 1"}])
    check(s, policy, text)


@POLICY
async def test_edit_notebook_of_another_version(tmp_path, root, policy):
    # The refusal names the version, which is the file's own text; a version 3 notebook goes
    # through nbformat's conversion, whose complaints quote the file.
    (root / ".env.ipynb").write_text(json.dumps({"nbformat": MARK, "cells": []}))
    (root / ".env.v3.ipynb").write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {"kernelspec": MARK},
        "worksheets": [{"cells": [{"cell_type": "code", "input": "1", "language": "python", "outputs": [], "metadata": {}}], "metadata": {}}]}))  # fmt: skip
    async with server(tmp_path, root, policy) as s:
        version = await s.fail("edit_notebook", "INVALID_PARAMS", path=".env.ipynb", edits=[{"op": "delete", "index": 0}])
        old = await s.fail("edit_notebook", "INVALID_PARAMS", path=".env.v3.ipynb", edits=[{"op": "insert", "source": "x = 1"}])
    check(s, policy, version, old)
    assert "nbformat 3 or 4" in version and "would not be valid nbformat" in old, old


@POLICY
async def test_edit_notebook_edits(tmp_path, root, policy):
    nb = json.loads((root / ".env.ipynb").read_text())
    nb["metadata"] = {}
    (root / ".env.ipynb").write_text(json.dumps(nb))
    async with server(tmp_path, root, policy) as s:
        dry = await s.ok("edit_notebook", path=".env.ipynb", edits=[{"op": "insert", "source": "x = 1"}], dryRun=True)
        text = await s.ok("edit_notebook", path=".env.ipynb", edits=[{"op": "replace", "index": 0, "cellType": "markdown"}])
    assert not s.leaked()  # the tool reports cell counts and kinds only, protected or not
    assert "now 2 cells" in dry and "replaced [0] markdown" in text
    assert json.loads((root / ".env.ipynb").read_text())["cells"][0]["cell_type"] == "markdown"


# -- what the others answer -------------------------------------------------------------------


@POLICY
async def test_write_append_and_undo_say_what_happened_without_content(tmp_path, root, policy):
    async with server(tmp_path, root, policy) as s:
        wrote = await s.ok("write_file", path=".env", content=ENV + "EXTRA=1\n")
        appended = await s.ok("append_file", path=".env", content="MORE=2\n")
        await s.ok("write_file", path=".env", content=ENV)
        await s.ok("edit_file", path=".env", edits=[{"oldText": "DB_USER=app", "newText": "DB_USER=web"}])
        change = (await s.ok("list_changes")).split()[0]
        is_error, undone = await s.call("undo_change", id=change)
    if policy == "protected":
        # undo_change puts a file's entry back, which the policy refuses for a protected file
        # even under allow_write (as it refuses a move or a deletion): no content either way.
        assert not s.leaked() and is_error and undone.startswith("ACCESS_DENIED: ") and ENV not in undone
    else:
        assert not is_error and "undone" in undone and (root / ".env").read_text() == ENV
    assert "Successfully wrote" in wrote and "Successfully" in appended and MARK not in wrote + appended


@POLICY
async def test_json_format_carries_no_line_either(tmp_path, root, policy):
    # The json formatter sends each tool's data (diff, per-file errors, failed hunks' reports,
    # a batch's step results) rather than its text.
    miss = [{"oldText": "DB_PASSWORD=x\nDB_USER=web", "newText": "y"}]
    async with server(tmp_path, root, policy, "--format", "json") as s:
        await s.ok("edit_file", path=".env", edits=[{"oldText": "DB_USER=app", "newText": "DB_USER=web"}])
        await s.fail("edit_file", "PATTERN_NOT_FOUND", path=".env", edits=miss)
        await s.ok("edit_files", paths=[".env"], edits=[{"oldText": "DB_NAME=shop", "newText": "DB_NAME=store"}])
        await s.ok("edit_files", paths=[".env"], edits=miss)
        await s.fail("patch_apply", "PATCH_FAILED", patch=_patch("DB_USER=web", "DB_USER=x", password="guess"))
        await s.ok("batch_operations", operations=[
            {"tool": "edit_file", "arguments": {"path": ".env", "edits": [{"oldText": "DB_HOST=db.internal", "newText": "DB_HOST=db"}]}},
            {"tool": "edit_file", "arguments": {"path": ".env", "edits": miss}, "continueOnError": True},
        ])  # fmt: skip
        await s.fail("edit_notebook", "INVALID_PARAMS", path=".env.ipynb", edits=[{"op": "insert", "source": "x = 1"}])
    check(s, policy)
    assert (root / ".env").read_text() == ENV.replace("DB_USER=app", "DB_USER=web").replace("shop", "store").replace("db.internal", "db")


# -- a link swapped in while the call runs ----------------------------------------------------

RACE_ROUNDS = 300
SWAPPER = """
import os, sys
root, flips = sys.argv[1], 0
plain, link, file = (os.path.join(root, n) for n in ("plain.txt", "plain.lnk", "plain.tmp"))
while not os.path.exists(os.path.join(root, "stop")):
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(".env", link)
    os.rename(link, plain)
    with open(file, "w") as f:
        f.write("DB_PASSWORD=none\\nDB_USER=app\\n")
    os.rename(file, plain)
    flips += 1
print(flips)
"""
"""A local process that flips ``plain.txt`` between a file and a link to ``.env`` until told to stop."""


async def test_a_link_swapped_in_mid_edit_does_not_show_the_secret(tmp_path, root):
    """While ``plain.txt`` flips between a file and a link to ``.env``, edits of ``plain.txt``
    ask for a text that is not there: an edit that checked a plain file must not then read
    ``.env`` (writable, not readable) and quote it in its closest-text hint."""
    (root / "plain.txt").write_text("DB_PASSWORD=none\nDB_USER=app\n")
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(root)], stdout=subprocess.PIPE, text=True)
    hints = refused = 0
    try:
        async with server(tmp_path, root, "protected") as s:
            for _ in range(RACE_ROUNDS):
                _, text = await s.call("edit_file", path="plain.txt", edits=[{"oldText": "DB_PASSWORD=x\nDB_USER=app", "newText": "y"}])
                hints += "The closest text is at" in text
                refused += text.startswith("ACCESS_DENIED: ")
    finally:
        (root / "stop").touch()
        flips = int(swapper.communicate(timeout=60)[0])
    leaks = sum(MARK in seen for seen in s.seen)
    print(f"{RACE_ROUNDS} rounds, {flips} flips, {hints} closest-text hints, {refused} refused, {leaks} leaks")
    assert flips > RACE_ROUNDS and hints > 0  # the race ran, and plain reads got their hint
    assert leaks == 0, [seen for seen in s.seen if MARK in seen][:3]
    assert (root / ".env").read_text() == ENV


@POLICY
async def test_archives_and_the_audit_log_hold_no_line_either(tmp_path, root, policy):
    """Routes that never showed a protected file's lines, kept so under allow_write: an archive
    of the tree leaves the protected files out; an archive at a protected name (``.env.tar``) is
    neither written, listed nor extracted; the audit log keeps sizes and hashes of an edit."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("inner.txt")
        info.size = len(ENV)
        tar.addfile(info, io.BytesIO(ENV.encode()))
    (root / ".env.tar").write_bytes(buffer.getvalue())
    async with server(tmp_path, root, policy, "--audit-log", str(tmp_path / "audit.jsonl")) as s:
        packed = await s.ok("compress_files", paths=["."], output="packed.tar")
        made = await s.call("compress_files", paths=["README.md"], output=".env.new.tar")
        listed = await s.call("list_archive", archive=".env.tar")
        extracted = await s.call("extract_archive", archive=".env.tar", destination="out")
        await s.ok("edit_file", path=".env", edits=[{"oldText": "DB_USER=app", "newText": "DB_USER=web"}])
    log = (tmp_path / "audit.jsonl").read_text()
    assert MARK not in log and log.count("\n") == 5
    if policy == "protected":
        assert not s.leaked() and made[0] and listed[0] and extracted[0]
        assert "protected (the secrets policy)" in packed and MARK.encode() not in (root / "packed.tar").read_bytes()
        assert not (root / "out").exists()
    else:
        assert not made[0] and not listed[0] and not extracted[0]
    assert "DB_USER=web" in (root / ".env").read_text()


@POLICY
async def test_a_program_that_may_write_gets_no_protected_argument(tmp_path, root, policy):
    """A writing command the operator allows (``cp``) names ``.env``: checked only as a write,
    allow_write let it run, and where programs are not confined (``--sandbox off``, a kernel
    without Landlock) the secret went to a readable name."""
    config = tmp_path / "shell.toml"
    config.write_text('[plugins.secrets]\nallow_write = true\n\n[plugins.shell]\nallow = ["cp"]\n')
    extra = ["--disable", "secrets"] if policy == "plain" else []
    async with serve_stdio(str(root), "--config", str(config), "--sandbox", "off", *extra) as client:
        s = Calls(client)
        is_error, text = await s.call("run_command", command="cp", args=[".env", "copy.txt"])
        if (root / "copy.txt").exists():
            await s.call("read_file", path="copy.txt")
    check(s, policy)
    if policy == "protected":
        assert is_error and text.startswith("ACCESS_DENIED: ") and WITHHELD in text and not (root / "copy.txt").exists()
