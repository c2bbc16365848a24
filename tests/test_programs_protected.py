"""Programs the server starts cannot read protected files, whatever they name or walk.

Each test runs with the secrets policy on and, as the control, off (``disable = ["secrets"]``):
off, the same call shows the secret, so every test fails when the policy does nothing. The
programs are real (grep, cat, sh, ripgrep), confined by the real kernel; the server is the real
one over stdio with the SDK's client.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fsmcp_search.hooks
import fsmcp_shell.hooks
import pytest

from mcp import types

from fsmcp.sandbox import masks
from fsmcp.paths.protected import ProtectedNames
from fsmcp.testing import connect, forked, host_for, serve_stdio, text_of

pytestmark = pytest.mark.anyio

MARKER = "MARKER-7f3a"
SECRETS = {
    ".env": f"API_KEY={MARKER}-top\n",
    "sub/dir/.env": f"DB_PASSWORD={MARKER}-nested\n",
    ".aws/credentials": f"aws_secret_access_key={MARKER}-aws\n",
    "keys/id_rsa": f"-----BEGIN {MARKER}-rsa-----\n",
    "tls/server.PEM": f"{MARKER}-pem\n",
}
WITHOUT_USERNS = Path(__file__).with_name("without_userns.py")
POLICY = pytest.mark.parametrize("policy", ["on", "off"])


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    root = (tmp_path / "root").resolve()
    for rel, text in SECRETS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "a.txt").write_text(f"open {MARKER}-public\n")
    (root / "sub" / "b.txt").write_text("plain\n")
    (root / "docs").mkdir()
    (root / "docs" / "c.txt").write_text("plain\n")
    (root / "link").symlink_to(".env")
    return root


def _settings(policy: str) -> dict:
    shell = {"allow": ["grep", "cat", "rg", "sed"], "allow_shell": True}
    return {"plugins": {"shell": shell}, "disable": [] if policy == "on" else ["secrets"]}


async def _calls(root: Path, policy: str, *calls: tuple[str, dict]) -> list[tuple[bool, str]]:
    host = host_for([root], [("shell", fsmcp_shell.hooks), ("search", fsmcp_search.hooks)], sandbox="require", **_settings(policy))
    async with connect(host) as client:
        return [((r := await client.call_tool(tool, args)).is_error, text_of(r)) for tool, args in calls]


def _leaked(text: str) -> list[str]:
    return [line for line in text.splitlines() if MARKER in line and f"{MARKER}-public" not in line]


@POLICY
async def test_a_recursive_grep_shows_no_protected_line(seeded, policy):
    (error, text), = await _calls(seeded, policy, ("run_command", {"command": "grep", "args": ["-r", MARKER, str(seeded)]}))
    print(text)
    assert not error and f"{MARKER}-public" in text
    if policy == "on":
        assert _leaked(text) == []
    else:
        assert len(_leaked(text)) == len(SECRETS)


@POLICY
async def test_ripgrep_started_by_run_command_and_grep_files_show_none(seeded, policy):
    results = await _calls(
        seeded, policy,
        ("run_command", {"command": "rg", "args": ["-uu", MARKER]}),
        ("grep_files", {"regex": MARKER, "directory": ".", "includeIgnored": True}),
    )
    for error, text in results:
        print(text)
        assert not error and f"{MARKER}-public" in text
        assert (_leaked(text) == []) == (policy == "on")


@POLICY
async def test_an_argument_naming_one_is_refused(seeded, policy):
    named = [["link"], ["./.ENV"], [str(seeded / "sub/dir/.env")], ["--file=.env", "a.txt"], ["-f", ".aws/credentials", "a.txt"]]
    results = await _calls(seeded, policy, *[("run_command", {"command": "grep" if "-f" in a[0] else "cat", "args": a}) for a in named])
    for args, (error, text) in zip(named, results):
        print(args, text)
        if policy == "on":
            assert error and text.startswith("ACCESS_DENIED: argument ") and "protected by the secrets policy" in text and "Nothing was run" in text
        else:
            assert not error


@POLICY
async def test_a_shell_reads_none_of_them(seeded, policy):
    script = "cat .env link sub/dir/.env .aws/credentials keys/id_rsa tls/server.PEM; grep -r MARKER . ; cat a.txt"
    (error, text), = await _calls(seeded, policy, ("run_shell", {"command": script}))
    print(text)
    assert f"{MARKER}-public" in text
    assert (_leaked(text) == []) == (policy == "on")


@POLICY
async def test_a_program_can_neither_change_nor_remove_one(seeded, policy):
    script = "echo planted > .env; echo planted >> sub/dir/.env; mv a.txt keys/id_rsa; rm -f tls/server.PEM; umount .env; cat .env"
    (error, text), = await _calls(seeded, policy, ("run_shell", {"command": script}))
    print(text)
    kept = all((seeded / rel).exists() and (seeded / rel).read_text() == body for rel, body in SECRETS.items())
    assert kept == (policy == "on")
    assert ("Read-only file system" in text and "Device or resource busy" in text) == (policy == "on")


@POLICY
async def test_writes_beside_a_protected_file_still_work(seeded, policy):
    script = "sed -i s/open/OPEN/ a.txt && echo new > new.txt && cat new.txt a.txt && echo more > sub/dir/c.txt && cat sub/dir/c.txt"
    (error, text), = await _calls(seeded, policy, ("run_shell", {"command": script}))
    print(text)
    assert not error and text.startswith("exit_code: 0") and "new\nOPEN " in text and "more" in text
    assert (seeded / "a.txt").read_text().startswith("OPEN")


async def test_a_protected_directory_is_hidden_whole(seeded):
    (seeded / "vault").mkdir()
    (seeded / "vault" / "notes.txt").write_text(f"{MARKER}-vault\n")
    for policy, expected in (("on", False), ("off", True)):
        settings = _settings(policy)
        settings["plugins"]["secrets"] = {"add": ["vault"]}
        host = host_for([seeded], [("shell", fsmcp_shell.hooks)], sandbox="require", **settings)
        async with connect(host) as client:
            text = text_of(await client.call_tool("run_shell", {"command": "ls vault; cat vault/notes.txt; grep -r vault-x ."}))
        print(text)
        assert (f"{MARKER}-vault" in text) == expected


# Where the system allows no user namespace, Landlock alone leaves them out.

def _served_without_userns(root: Path, tmp_path: Path, policy: str):
    config = tmp_path / "fsmcp.toml"
    config.write_text(('disable = ["secrets"]\n' if policy == "off" else "") + '[plugins.shell]\nallow = ["grep", "cat"]\nallow_shell = true\n')
    return serve_stdio(str(root), "--config", str(config), "--enable", "shell", "--sandbox", "require", under=WITHOUT_USERNS)


def test_without_userns_the_probe_says_no():
    done = subprocess.run([sys.executable, str(WITHOUT_USERNS), "-I", "-S", masks.LAUNCHER, "--probe"], capture_output=True)
    assert done.returncode == 1
    assert subprocess.run([sys.executable, "-I", "-S", masks.LAUNCHER, "--probe"]).returncode == 0


@POLICY
async def test_without_userns_landlock_alone_hides_them(seeded, tmp_path, policy):
    script = "cat .env link; grep -r MARKER .; echo new > new.txt; cat new.txt; sed -i s/plain/PLAIN/ docs/c.txt; cat docs/c.txt"
    async with _served_without_userns(seeded, tmp_path, policy) as client:
        text = text_of(await client.call_tool("run_shell", {"command": script}))
    print(text)
    assert f"{MARKER}-public" in text and "PLAIN" in text  # a directory with none beneath it is as before
    assert (_leaked(text) == []) == (policy == "on")
    # The price: a file the program creates beside a protected one, it cannot read back.
    assert ("cat: new.txt: Permission denied" in text) == (policy == "on")


def test_the_walk_sees_changes_and_keeps_unchanged_directories(tmp_path, monkeypatch):
    root = tmp_path / "r"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.txt").write_text("x")
    names = ProtectedNames([".env"])
    finder = masks.Finder(str(root), names)
    assert finder.find() == []
    (root / "a" / "b" / ".env").write_text("k")
    assert finder.find() == [f"{root}/a/b/.env"]
    for directory in (root, root / "a", root / "a" / "b"):
        os.utime(directory, (1_000_000, 1_000_000))  # long ago: the next change shows whatever the clock's tick
    monkeypatch.setattr(masks, "RACY_NS", -1)  # and trusted at once (their change times are now)
    finder.find()
    read: list[str] = []
    real = finder._read
    monkeypatch.setattr(finder, "_read", lambda d, rel, stamp: (read.append(d), real(d, rel, stamp))[1])
    assert finder.find() == [f"{root}/a/b/.env"] and read == []
    (root / "a" / ".env").write_text("k")
    assert sorted(finder.find()) == [f"{root}/a/.env", f"{root}/a/b/.env"] and read == [f"{root}/a"]


def test_a_walk_past_its_limit_refuses(tmp_path):
    for i in range(30):
        (tmp_path / f"f{i}").write_text("")
    with pytest.raises(Exception) as caught:
        masks.Finder(str(tmp_path), ProtectedNames([".env"])).find(limit=10)
    assert "more than 10 entries" in str(caught.value) and "not started" in str(caught.value)


def test_fsmcp_plugins_says_how_they_are_hidden(tmp_path):
    shown = subprocess.run(forked("plugins", str(tmp_path)), capture_output=True, text=True, timeout=120).stderr
    alone = subprocess.run(forked("plugins", str(tmp_path), under=WITHOUT_USERNS), capture_output=True, text=True, timeout=120).stderr
    assert "fsmcp: protected files hidden from programs by read-only empty mounts over them" in shown, shown
    assert "fsmcp: protected files hidden from programs by Landlock alone (this system allows no user namespace)" in alone, alone


async def test_a_file_the_user_allowed_once_is_read_by_that_call_only(seeded):
    class User:
        asked = 0

        async def __call__(self, context, params):
            User.asked += 1
            return types.ElicitResult(action="accept", content={"answer": "allow_once" if User.asked == 1 else "deny"})

    async with serve_stdio("--enable", "shell", "--sandbox", "require", str(seeded), elicitation_callback=User()) as client:
        allowed = text_of(await client.call_tool("run_command", {"command": "cat", "args": [".env"]}))
        again = await client.call_tool("run_command", {"command": "cat", "args": [".env"]})
        walked = text_of(await client.call_tool("run_command", {"command": "grep", "args": ["-r", MARKER, "."]}))
    assert f"{MARKER}-top" in allowed
    assert again.is_error and "the user was asked and declined" in text_of(again)
    assert _leaked(walked) == [] and f"{MARKER}-public" in walked


async def test_unconfined_only_the_argument_check_holds(seeded):
    """sandbox = off (as a kernel without Landlock under auto): the documented last row."""
    host = host_for([seeded], [("shell", fsmcp_shell.hooks)], sandbox="off", **_settings("on"))
    async with connect(host) as client:
        named = await client.call_tool("run_command", {"command": "cat", "args": [".env"]})
        walked = text_of(await client.call_tool("run_command", {"command": "grep", "args": ["-r", MARKER, "."]}))
    assert named.is_error and "protected by the secrets policy" in text_of(named)
    assert len(_leaked(walked)) == len(SECRETS)
