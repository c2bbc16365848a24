"""awk and sed run as ``gawk --sandbox`` and ``sed --sandbox``, whatever name the client gives:
their own parser, not a text check of the program, is what refuses commands, pipes and files
named inside the program. Attacked through the real server over stdio, on the real kernel
(Landlock), and on a kernel without Landlock (``without_landlock.py``) with ``sandbox = "off"``.

The attacks are ones a text check let through: after ``exit`` a checker reads ``/#/`` as a
division and a comment, where awk reads a regex; after ``:x`` it reads ``e id`` as part of the
label, where GNU sed reads a command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fsmcp.testing import forked, serve_stdio, text_of, tree_of

pytestmark = pytest.mark.anyio

WITHOUT_LANDLOCK = Path(__file__).resolve().parents[3] / "tests" / "without_landlock.py"
SECRET = "TOP-SECRET"  # the outside fixture's secret.txt
RAN = "uid="  # what `id` prints: a command ran
AWKS = ("awk", "gawk", "mawk", "nawk")

NO_SANDBOX_SED = """#!/bin/sh
# A sed that knows no --sandbox (busybox's, the BSDs', GNU's before 4.3), otherwise GNU's.
case "$1" in --sandbox) echo "sed: unrecognized option '--sandbox'" >&2; exit 1;; esac
exec /usr/bin/sed "$@"
"""


def awk_attack(outside: Path) -> str:
    return f'BEGIN {{ exit /#/ || system("/usr/bin/id; cat {outside}/secret.txt; echo x > {outside}/new.txt") }}'


def sed_attacks(outside: Path) -> list[str]:
    return [
        ":x e /usr/bin/id", f":x r {outside}/secret.txt", f":x w {outside}/new.txt", "v 4.2 e /usr/bin/id",
        "e /usr/bin/id", "1s/.*/id/e", f"r {outside}/secret.txt", f"R {outside}/secret.txt", f"w {outside}/new.txt",
        f"W {outside}/new.txt", f"s/a/b/w {outside}/new.txt",
    ]


def config(tmp_path: Path, allow: list[str], path: str | None = None) -> Path:
    file = tmp_path / "fsmcp.toml"
    lines = ["[plugins.shell]", f"allow = {json.dumps(allow)}"]
    if path is not None:
        lines.append(f"path = {json.dumps(path)}")
    file.write_text("\n".join(lines) + "\n")
    return file


@pytest.fixture
def no_gawk(tmp_path: Path) -> Path:
    """A PATH directory as on a machine without gawk: awk is mawk, and sed knows no --sandbox."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mawk = shutil.which("mawk")
    assert mawk, "this test needs mawk, the awk a machine without gawk has"
    for name in ("awk", "mawk", "nawk"):
        (bin_dir / name).symlink_to(mawk)
    (bin_dir / "sed").write_text(NO_SANDBOX_SED)
    (bin_dir / "sed").chmod(0o755)
    return bin_dir


async def _attack_all(client, root: Path, outside: Path, awks=AWKS) -> list[str]:
    (root / "a.txt").write_text("a\n")
    before = tree_of(outside)
    texts = []
    for command in awks:
        texts.append(f"{command}: " + text_of(await client.call_tool("run_command", {"command": command, "args": [awk_attack(outside), "a.txt"]})))
    for script in sed_attacks(outside):
        texts.append(f"sed {script}: " + text_of(await client.call_tool("run_command", {"command": "sed", "args": [script, "a.txt"]})))
    print("\n".join(texts))
    for text in texts:
        assert RAN not in text and SECRET not in text, text
    assert tree_of(outside) == before
    return texts


async def test_under_landlock_awk_and_sed_run_nothing_read_nothing_write_nothing(root, outside, tmp_path):
    conf = config(tmp_path, [*AWKS, "sed"])
    async with serve_stdio(str(root), "--config", str(conf), "--enable", "shell") as client:
        texts = await _attack_all(client, root, outside)
    # gawk's and sed's own refusals: the programs ran, in their sandbox.
    for text in texts[: len(AWKS)]:
        assert "'system' function not allowed in sandbox mode" in text, text
    for text in texts[len(AWKS) :]:
        assert "e/r/w commands disabled in sandbox mode" in text, text


async def test_without_landlock_and_sandbox_off_awk_and_sed_still_run_nothing(root, outside, tmp_path):
    conf = config(tmp_path, [*AWKS, "sed"])
    async with serve_stdio(str(root), "--config", str(conf), "--enable", "shell", "--sandbox", "off", under=WITHOUT_LANDLOCK) as client:
        texts = await _attack_all(client, root, outside)
    for text in texts[: len(AWKS)]:
        assert "'system' function not allowed in sandbox mode" in text, text


@pytest.mark.parametrize("under", [None, WITHOUT_LANDLOCK], ids=["landlock", "without-landlock"])
async def test_without_gawk_or_a_sandboxing_sed_they_are_not_run(root, outside, tmp_path, no_gawk, under):
    conf = config(tmp_path, [*AWKS, "sed"], path=str(no_gawk))
    sandbox = "auto" if under is None else "off"
    async with serve_stdio(str(root), "--config", str(conf), "--enable", "shell", "--sandbox", sandbox, under=under) as client:
        texts = await _attack_all(client, root, outside, awks=("awk", "mawk", "nawk"))
        tools = await client.list_tools()
    for text in texts[:3]:
        assert "COMMAND_NOT_ALLOWED" in text and "runs only as gawk --sandbox, and gawk is not installed" in text, text
    for text in texts[3:]:
        assert "COMMAND_NOT_ALLOWED" in text and "runs only as sed --sandbox, and" in text and "does not accept --sandbox" in text, text
    # Only gawk's absence is known at start-up: whether a sed accepts --sandbox takes starting it.
    assert "no shell: sed." in (tools.tools[0].description or ""), tools.tools[0].description


def test_the_start_up_says_which_programs_are_not_offered_and_why(tmp_path, no_gawk):
    root = tmp_path / "root"
    root.mkdir()
    conf = config(tmp_path, ["awk", "mawk", "sed", "cat"], path=str(no_gawk))
    done = subprocess.run(
        forked("tools", "--config", str(conf), "--enable", "shell", str(root)),
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    print(done.stderr)
    assert done.returncode == 0, done.stderr
    assert "awk, mawk are not offered: they run only as gawk --sandbox, and gawk is not installed" in done.stderr
    assert "install gawk to offer them" in done.stderr


IN_PROGRAM = [
    # What a text check of the program used to refuse, now refused by the program's own sandbox.
    ("sed", ["w out", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["1W out", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["/a/w out", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["s/a/b/gw out", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["s|a|id|e", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["r /etc/passwd", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["$R x", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["-n", "-e", "p", "-e", "$!{w out", "-e", "}", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["y/ab/cd/;e", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("sed", ["-n", "-f", "prog.sed", "a.txt"], "prog.sed line 1: e/r/w commands disabled in sandbox mode"),
    ("sed", ["--posix", "-s", "-E", "b x w out\n:x", "a.txt"], "e/r/w commands disabled in sandbox mode"),
    ("awk", ['{ print | "sh" }', "a.txt"], "redirection not allowed in sandbox mode"),
    ("awk", ['BEGIN { "id" | getline x; print x }'], "redirection not allowed in sandbox mode"),
    ("awk", ['{ print $1 >> "out" }', "a.txt"], "redirection not allowed in sandbox mode"),
    ("mawk", ['{ printf("%s", $0) > "out" }', "a.txt"], "redirection not allowed in sandbox mode"),
    ("nawk", ['BEGIN { while ((getline l < "/etc/passwd") > 0) print l }'], "redirection not allowed in sandbox mode"),
    ("awk", ['BEGIN { ARGV[1] = "/etc/passwd"; ARGC = 2 } { print }'], "cannot add a new file (/etc/passwd) to ARGV in sandbox mode"),
    ("awk", ['@load "filefuncs"; BEGIN { }'], "extensions are not allowed in sandbox mode"),
    ("awk", ["-l", "filefuncs", "BEGIN { }"], "extensions are not allowed in sandbox mode"),
    ("awk", ['BEGIN { "date" |& getline }'], "redirection not allowed in sandbox mode"),
    ("gawk", ['BEGIN { f = "system"; @f("id") }'], "'system' function not allowed in sandbox mode"),
    ("awk", ["-f", "prog.awk", "a.txt"], "prog.awk:1: fatal: 'system' function not allowed in sandbox mode"),
    ("awk", ["--traditional", "--exec=prog.awk"], "'system' function not allowed in sandbox mode"),
    ("awk", ["-i", "prog.awk", "BEGIN { }"], "'system' function not allowed in sandbox mode"),
    ("awk", ["--", 'BEGIN { system("id") }'], "'system' function not allowed in sandbox mode"),
]


@pytest.mark.parametrize(("command", "args", "refusal"), IN_PROGRAM, ids=lambda v: v if isinstance(v, str) else None)
async def test_what_a_program_reaches_for_is_refused_by_its_own_sandbox(root, call, spawned, command, args, refusal):
    (root / "a.txt").write_text("a\n")
    (root / "prog.awk").write_text('BEGIN { system("id") }\n')
    (root / "prog.sed").write_text("e id\n")
    before = tree_of(root)
    result = await call({"command": command, "args": args}, shell={"allow": [*AWKS, "sed"]})
    text = text_of(result)
    assert not result.is_error and text.startswith("exit_code: ") and not text.startswith("exit_code: 0"), text
    assert refusal in text and RAN not in text and "root:" not in text, text
    assert spawned == [[SANDBOXED[command], "--sandbox", *args]]
    assert tree_of(root) == before


SANDBOXED = {"awk": "gawk", "gawk": "gawk", "mawk": "gawk", "nawk": "gawk", "sed": "sed"}


@pytest.mark.parametrize("command", [*AWKS, "sed"])
async def test_every_name_runs_the_sandboxed_program_and_reads_its_files(root, call, ok, spawned, command):
    (root / "a.txt").write_text("one\ntwo\n")
    program = "NR == 2" if command != "sed" else "2!d"
    text = ok(await call({"command": command, "args": [program, "a.txt"]}, shell={"allow": [command]}))
    assert text == "exit_code: 0\nstdout:\ntwo\nstderr:", text
    assert spawned[-1] == [SANDBOXED[command], "--sandbox", program, "a.txt"]


@pytest.mark.parametrize(("sandbox", "shown"), [("auto", False), ("off", True)])
async def test_include_of_a_protected_file_shows_nothing_only_under_landlock(root, call, sandbox, shown):
    """gawk's sandbox lets @include read source files, and a syntax error shows their lines: the
    kernel's masks keep .env from it; with sandbox = "off" it is read (docs/threat-model.md)."""
    (root / ".env").write_text("PASSWORD: hunter2)\n")
    text = text_of(await call({"command": "awk", "args": ['@include ".env"']}, sandbox=sandbox))
    print(text)
    assert ("hunter2" in text) is shown, text


def test_every_start_says_it_not_only_the_first(tmp_path, no_gawk):
    """A start with a warning is not kept for the next (catalog.py): the next says it again."""
    root = tmp_path / "root"
    root.mkdir()
    conf = config(tmp_path, ["awk", "cat"], path=str(no_gawk))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for start in (1, 2):
        done = subprocess.run(
            forked("serve", "--config", str(conf), "--enable", "shell", str(root)),
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, env=env,
        )
        print(start, done.stderr)
        assert "awk is not offered: it runs only as gawk --sandbox" in done.stderr, f"start {start}: {done.stderr}"


async def test_a_kept_start_whose_gawk_went_missing_says_so_from_the_next_start(tmp_path, no_gawk):
    """The tool-list cache does not know what is installed outside Python: the first call finds
    gawk gone, warns, and drops the kept start, so the next start says it at start-up."""
    root = tmp_path / "root"
    root.mkdir()
    (no_gawk / "gawk").symlink_to(shutil.which("gawk"))
    conf = config(tmp_path, ["awk", "cat"], path=str(no_gawk))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}

    def start() -> str:
        done = subprocess.run(
            forked("serve", "--config", str(conf), "--enable", "shell", str(root)),
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, env={**os.environ, **env},
        )
        return done.stderr

    assert "not offered" not in start()  # kept
    (no_gawk / "gawk").unlink()
    async with serve_stdio(str(root), "--config", str(conf), "--enable", "shell", env=env) as client:
        result = await client.call_tool("run_command", {"command": "awk", "args": ["{ print }"]})
    assert "awk runs only as gawk --sandbox, and gawk is not installed" in text_of(result), text_of(result)
    said = start()
    assert "awk is not offered: it runs only as gawk --sandbox" in said, said
