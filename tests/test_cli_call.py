"""``fsmcp call TOOL JSON``: one tool run in process by the real command, its output and exit status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fsmcp.testing import forked

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def fsmcp_call(*args: str | Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real command, forked (``forked``): its output and exit status are fsmcp's, not the interpreter's start."""
    return subprocess.run(forked("call", *map(str, args)), check=False, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text("first line\nsecond line\n")
    return root.resolve()


def test_success_prints_the_result_text_and_exits_0(root):
    done = fsmcp_call("read_file", '{"path": "notes.txt"}', root, cwd=root.parent)
    assert (done.returncode, done.stdout, done.stderr) == (0, "first line\nsecond line\n", "")


def test_a_change_is_made_and_reported(root):
    done = fsmcp_call("write_file", '{"path": "new.txt", "content": "made by call"}', "--root", root, cwd=root.parent)
    assert done.returncode == 0, done.stderr
    assert (root / "new.txt").read_text() == "made by call"
    assert str(root / "new.txt") in done.stdout


def test_roots_default_to_the_current_directory_and_arguments_may_come_from_stdin(root):
    done = fsmcp_call("read_file", "-", cwd=root, stdin='{"path": "notes.txt", "startLine": 2}')
    assert (done.returncode, done.stdout) == (0, "second line\n")


def test_binary_content_is_described_on_one_line(root):
    (root / "dot.png").write_bytes(PNG)
    done = fsmcp_call("read_file", '{"path": "dot.png"}', root, cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"[image: image/png, {len(PNG)} bytes]"
    assert "\x89" not in done.stdout


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ('{"path": "absent.txt"}', "NOT_FOUND"),
        ('{"path": "/etc/hostname"}', "ACCESS_DENIED"),
        ('{"path": "notes.txt", "bogus": 1}', "INVALID_PARAMS"),
        ("{}", "INVALID_PARAMS"),
    ],
)
def test_a_tool_error_exits_1_with_code_and_message_on_stderr(root, arguments, code):
    done = fsmcp_call("read_file", arguments, root, cwd=root)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"{code}: ")


def test_a_refused_change_changes_nothing(root):
    done = fsmcp_call("write_file", '{"path": "notes.txt", "content": "x"}', f"{root}:ro", cwd=root)
    assert done.returncode == 1
    assert done.stderr.startswith("READ_ONLY: ")
    assert (root / "notes.txt").read_text() == "first line\nsecond line\n"


@pytest.mark.parametrize("arguments", ['{"path": ', "notes.txt", "", "[1, 2]", '"notes.txt"', "null"])
def test_arguments_that_are_not_a_json_object_exit_2(root, arguments):
    done = fsmcp_call("read_file", arguments, root, cwd=root)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("fsmcp: error: the arguments ")
    assert "JSON" in done.stderr


def test_an_unknown_tool_exits_2_and_names_the_offered_ones(root):
    done = fsmcp_call("read_fiel", '{"path": "notes.txt"}', root, cwd=root)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("fsmcp: error: unknown tool 'read_fiel'; this server offers: ")
    assert "read_file" in done.stderr


def test_a_disabled_tool_is_unknown_to_that_configuration(root):
    done = fsmcp_call("delete_file", '{"path": "notes.txt"}', root, "--disable", "delete_file", cwd=root)
    assert done.returncode == 2
    assert "unknown tool 'delete_file'" in done.stderr
    assert (root / "notes.txt").exists()


def test_format_json_prints_the_envelope_on_success(root):
    done = fsmcp_call("get_file_info", '{"path": "notes.txt"}', root, "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is True
    assert envelope["data"]["path"] == str(root / "notes.txt")
    assert envelope["data"]["size"] == len("first line\nsecond line\n")


def test_format_json_prints_the_error_envelope_on_stdout_and_exits_1(root):
    done = fsmcp_call("read_file", '{"path": "absent.txt"}', root, "--format", "json", cwd=root)
    assert done.returncode == 1
    assert done.stderr == ""
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "NOT_FOUND"
    assert set(envelope["error"]) == {"code", "message", "details"}


def test_a_bad_setting_exits_2(root):
    done = fsmcp_call("read_file", '{"path": "notes.txt"}', root, "--budget", "5", cwd=root)
    assert done.returncode == 2
    assert done.stderr.startswith("fsmcp: error: budget must be")
