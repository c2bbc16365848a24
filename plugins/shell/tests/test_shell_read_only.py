"""Read-only roots and --read-only: only commands known to change nothing run there."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

TOUCH = {"allow": ["cat", "grep", "touch"]}


@pytest.fixture
def ro(tmp_path):
    path = tmp_path / "ro"
    path.mkdir()
    (path / "a.txt").write_text("read me\n")
    return path.resolve()


async def test_read_only_commands_run_under_read_only(root, call, ok):
    (root / "a.txt").write_text("x\n")
    assert ok(await call({"command": "grep", "args": ["x", "a.txt"]}, read_only=True)).startswith("exit_code: 0")


async def test_other_commands_are_refused_under_read_only(root, call, failure, spawned):
    code, message = failure(await call({"command": "touch", "args": ["new"]}, shell=TOUCH, read_only=True))
    assert code == "READ_ONLY"
    assert message == "touch is not a known read-only command, and the server runs with --read-only; here only read-only commands run: cat, grep"
    assert spawned == [] and not (root / "new").exists()


async def test_a_read_only_working_directory_refuses_other_commands(root, ro, call, failure):
    code, message = failure(await call({"command": "touch", "args": ["new"], "workingDirectory": str(ro)}, roots=[root, f"{ro}:ro"], shell=TOUCH))
    assert code == "READ_ONLY" and f"{ro} is a read-only root" in message
    assert not (ro / "new").exists()


async def test_a_command_that_may_write_cannot_name_a_read_only_path(root, ro, call, failure):
    code, message = failure(await call({"command": "touch", "args": [str(ro / "new")]}, roots=[root, f"{ro}:ro"], shell=TOUCH))
    assert code == "READ_ONLY" and message.startswith(f"argument '{ro}/new' of touch is refused")
    assert not (ro / "new").exists()


async def test_read_only_commands_read_read_only_roots(root, ro, call, ok):
    text = ok(await call({"command": "cat", "args": [str(ro / "a.txt")]}, roots=[root, f"{ro}:ro"], shell=TOUCH))
    assert "read me" in text
    assert "read me" in ok(await call({"command": "cat", "args": ["a.txt"], "workingDirectory": str(ro)}, roots=[root, f"{ro}:ro"]))


async def test_the_operator_can_vouch_for_more_read_only_commands(root, call, ok):
    (root / "a.txt").write_text("x\n")
    shell = {"allow": ["md5sum"], "read_only_commands": ["md5sum"]}
    assert "a.txt" in ok(await call({"command": "md5sum", "args": ["a.txt"]}, shell=shell, read_only=True))
