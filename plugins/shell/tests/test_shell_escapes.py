"""The ways an allowed command could reach outside the roots, each refused before anything runs,
and the everyday uses the rules must not catch."""

from __future__ import annotations

import pytest

import fsmcp_shell.hooks
from fsmcp import hookimpl
from fsmcp.testing import connect, host_for

pytestmark = pytest.mark.anyio

ESCAPES = [
    # find: runs programs, deletes, writes files, reads start points from a file, follows links
    ("find", [".", "-exec", "id", ";"], "-exec", "runs another program"),
    ("find", [".", "-execdir", "id", "{}", "+"], "-execdir", "runs another program"),
    ("find", [".", "-ok", "id", ";"], "-ok", "runs another program"),
    ("find", [".", "-okdir", "id", ";"], "-okdir", "runs another program"),
    ("find", [".", "-delete"], "-delete", "deletes files"),
    ("find", [".", "-fprint", "out"], "-fprint", "writes a file"),
    ("find", [".", "-fprint0", "out"], "-fprint0", "writes a file"),
    ("find", [".", "-fprintf", "out", "%p"], "-fprintf", "writes a file"),
    ("find", [".", "-fls", "out"], "-fls", "writes a file"),
    ("find", ["-files0-from", "list"], "-files0-from", "reads the starting points from a file"),
    ("find", ["-L", "."], "-L", "follows symbolic links"),
    ("find", [".", "-follow"], "-follow", "follows symbolic links"),
    ("find", [".", "-xtype", "f"], "-xtype", "reports the type of what a link points to"),
    ("find", [".", "-printf", "%p %Y\\n"], "%p %Y\\n", "%Y reports the type of what a link points to"),
    # sed: in-place edits (what a script does is sed --sandbox's to refuse: test_shell_sandboxed.py)
    ("sed", ["-i", "s/a/b/", "a.txt"], "-i", "edits files in place"),
    ("sed", ["-i.bak", "s/a/b/", "a.txt"], "-i.bak", "edits files in place"),
    ("sed", ["-ni", "p", "a.txt"], "-ni", "edits files in place"),
    ("sed", ["--in-place", "s/a/b/", "a.txt"], "--in-place", "edits files in place"),
    ("sed", ["--in-pl=.b", "s/a/b/", "a.txt"], "--in-pl=.b", "edits files in place"),
    ("sed", ["s/a/b/", "a.txt", "-i"], "-i", "edits files in place"),
    ("sed", ["--follow-symlinks", "p", "a.txt"], "--follow-symlinks", "only serves -i"),
    # awk: gawk's options that write files or run its debugger, which its sandbox does not cover
    ("awk", ["-W", "dump-variables=out", "{ }"], "-W", "implementation options"),
    ("awk", ["-d", "{ }"], "-d", "writes a file"),
    ("awk", ["-dout", "{ }"], "-dout", "writes a file"),
    ("awk", ["--dump-variables=out", "{ }"], "--dump-variables=out", "writes a file"),
    ("awk", ["-o", "{ }"], "-o", "writes a file"),
    ("awk", ["--pretty=out", "{ }"], "--pretty=out", "writes a file"),
    ("awk", ["-p", "{ }"], "-p", "writes a file"),
    ("awk", ["--prof", "{ }"], "--prof", "writes a file"),
    ("awk", ["-D", "{ }"], "-D", "debugger"),
    ("awk", ["--debug", "{ }"], "--debug", "debugger"),
    # rg: preprocessors, link following, decompressors, hostname program
    ("rg", ["--pre", "sh", "x"], "--pre", "runs another program on every file"),
    ("rg", ["--pre=sh", "x"], "--pre=sh", "runs another program on every file"),
    ("rg", ["--pre-glob", "*", "x"], "--pre-glob", "only serves --pre"),
    ("rg", ["-L", "x"], "-L", "follows symbolic links"),
    ("rg", ["-iL", "x"], "-iL", "follows symbolic links"),
    ("rg", ["--follow", "x"], "--follow", "follows symbolic links"),
    ("rg", ["-z", "x"], "-z", "runs decompression programs"),
    ("rg", ["--search-zip", "x"], "--search-zip", "runs decompression programs"),
    ("rg", ["--hostname-bin=sh", "x"], "--hostname-bin=sh", "runs another program"),
    # sort: writes output and temporary files, runs a compressor, reads a list of files
    ("sort", ["-o", "out", "a.txt"], "-o", "writes its output to a file"),
    ("sort", ["-oout", "a.txt"], "-oout", "writes its output to a file"),
    ("sort", ["--output=out", "a.txt"], "--output=out", "writes its output to a file"),
    ("sort", ["-T", ".", "a.txt"], "-T", "writes temporary files"),
    ("sort", ["--compress-program=sh", "a.txt"], "--compress-program=sh", "runs another program"),
    ("sort", ["--files0-from=list"], "--files0-from=list", "reads a list of file names"),
    # the rest of the default set
    ("grep", ["-R", "x", "."], "-R", "follows symbolic links"),
    ("grep", ["-rR", "x", "."], "-rR", "follows symbolic links"),
    ("grep", ["--dereference-recursive", "x", "."], "--dereference-recursive", "follows symbolic links"),
    ("ls", ["-lL"], "-lL", "follows symbolic links"),
    ("ls", ["--dereference"], "--dereference", "follows symbolic links"),
    ("du", ["-L", "."], "-L", "follows symbolic links"),
    ("du", ["--files0-from=list"], "--files0-from=list", "reads a list of file names"),
    ("wc", ["--files0-from=list"], "--files0-from=list", "reads a list of file names"),
    ("diff", ["-l", "a.txt", "a.txt"], "-l", "pipes its output through the pr program"),
    ("file", ["-f", "list"], "-f", "reads a list of file names"),
    ("file", ["-C", "-m", "magic"], "-C", "writes a compiled magic file"),
    ("file", ["-z", "a.txt"], "-z", "runs decompression programs"),
    ("file", ["--no-sandbox", "a.txt"], "--no-sandbox", "turns off file's own system-call sandbox"),
    ("uniq", ["a.txt", "out"], "out", "uniq writes its output to a second file operand"),
]


@pytest.mark.parametrize(("command", "args", "argument", "reason"), ESCAPES, ids=lambda v: v if isinstance(v, str) else None)
async def test_each_escape_route_is_refused_and_nothing_runs(root, call, failure, spawned, command, args, argument, reason):
    (root / "a.txt").write_text("a\n")
    code, message = failure(await call({"command": command, "args": args}))
    assert code == "COMMAND_NOT_ALLOWED"
    assert message.startswith(f"{command} argument {argument!r} is refused: ")
    assert reason in message and message.endswith("Nothing was run")
    assert spawned == []
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]


PATH_ARGUMENTS = [
    ("cat", ["{outside}/secret.txt"]),
    ("cat", ["../outside/secret.txt"]),
    ("cat", ["sub/../../outside/secret.txt"]),
    ("cat", ["link-out"]),  # a relative name, but a symlink that points outside
    ("cat", ["dir-link/secret.txt"]),
    ("grep", ["-r", "SECRET", "{outside}"]),
    ("grep", ["--file={outside}/secret.txt", "a.txt"]),
    ("grep", ["-f{outside}/secret.txt", "a.txt"]),
    ("grep", ["-rf", "{outside}/secret.txt", "a.txt"]),
    ("grep", ["--exclude-from", "{outside}/secret.txt", "x", "a.txt"]),
    ("head", ["-c{outside}/secret.txt"]),
    ("find", ["{outside}"]),
    ("find", [".", "-newer", "{outside}/secret.txt"]),
    ("diff", ["a.txt", "{outside}/secret.txt"]),
    ("diff", ["--to-file={outside}/secret.txt", "a.txt"]),
    ("sed", ["p", "{outside}/secret.txt"]),
    ("sed", ["-e", "p", "../outside/secret.txt"]),
    ("awk", ["{ print }", "{outside}/secret.txt"]),
    ("awk", ["{ print }", "-F", "{outside}/secret.txt"]),  # after the program, -F is a file name to awk
    ("awk", ["-f", "{outside}/secret.txt", "a.txt"]),
    ("awk", ["--include={outside}/secret.txt", "{ }"]),
    ("awk", ["-E", "../outside/secret.txt"]),
    ("sed", ["-f", "{outside}/secret.txt", "a.txt"]),
    ("sed", ["-n", "--file=../outside/secret.txt", "a.txt"]),
    ("rg", ["SECRET", "{outside}"]),
    ("rg", ["--ignore-file={outside}/secret.txt", "x"]),
    ("file", ["-m", "magic:{outside}/secret.txt", "a.txt"]),
    ("sort", ["--random-source={outside}/secret.txt", "a.txt"]),
    ("uniq", ["{outside}/secret.txt"]),
    ("ls", ["-la", ".."]),
    ("du", ["-s", "{outside}"]),
    ("stat", ["/"]),
    ("tail", ["~/../../outside/secret.txt"]),  # ~ is a directory here, not a home
]


@pytest.mark.parametrize(("command", "args"), PATH_ARGUMENTS)
async def test_an_argument_naming_a_path_outside_is_refused_before_spawning(root, outside, call, failure, spawned, command, args):
    (root / "a.txt").write_text("a\n")
    (root / "sub").mkdir()
    (root / "link-out").symlink_to(outside / "secret.txt")
    (root / "dir-link").symlink_to(outside)
    (root / "~").mkdir()
    args = [a.replace("{outside}", str(outside)) for a in args]
    code, message = failure(await call({"command": command, "args": args}))
    assert code == "ACCESS_DENIED", message
    assert message.startswith("argument ") and message.endswith("Nothing was run")
    assert spawned == []


async def test_no_process_is_spawned_when_any_argument_is_refused(root, outside, call, failure):
    # touch would create the marker first if it ran at all.
    code, _ = failure(await call({"command": "touch", "args": ["marker", str(outside / "new")]}, shell={"allow": ["touch"]}))
    assert code == "ACCESS_DENIED"
    assert not (root / "marker").exists() and not (outside / "new").exists()


async def test_operator_added_commands_get_the_conservative_path_checks(root, outside, call, failure, ok):
    shell = {"allow": ["touch"]}
    assert failure(await call({"command": "touch", "args": ["-r", str(outside / "secret.txt"), "x"]}, shell=shell))[0] == "ACCESS_DENIED"
    assert failure(await call({"command": "touch", "args": [f"-r{outside}/secret.txt", "x"]}, shell=shell))[0] == "ACCESS_DENIED"
    assert failure(await call({"command": "touch", "args": [f"--reference={outside}/secret.txt", "x"]}, shell=shell))[0] == "ACCESS_DENIED"
    ok(await call({"command": "touch", "args": ["made"]}, shell=shell))
    assert (root / "made").exists()


EVERYDAY = [
    ("grep", ["/api/v1", "a.txt"], "/api/v1"),
    ("grep", ["-n", "-e", "/api/v1", "a.txt"], "1:/api/v1"),
    ("grep", ["-rn", "--include=*.txt", "../x", "."], "./a.txt:2:../x"),
    ("rg", ["--no-filename", "/api/v1", "a.txt"], "/api/v1"),
    ("rg", ["-g", "*.txt", "--path-separator", "/", "-l", "api", "."], "./a.txt"),
    ("sed", ["-n", "/^\\/api/p", "a.txt"], "/api/v1"),
    ("sed", ["s|/api|/v2|", "a.txt"], "/v2/v1"),
    ("sed", ["-n", "-e", "1{s/\\//#/;p}", "a.txt"], "#api/v1"),
    ("sed", ["a hello ; w not-a-command", "a.txt"], "hello ; w not-a-command"),
    ("awk", ["-F/", "{ print $2 }", "a.txt"], "api"),
    ("awk", ["/\\/api/ { print $0 }", "a.txt"], "/api/v1"),
    ("awk", ["NR == 1 { print (NF > 0), 10 / 2 }", "a.txt"], "1 5"),
    ("awk", ["-v", "prefix=/x", 'NR == 1 { print prefix "|" $0 }', "a.txt"], "/x|/api/v1"),
    ("cut", ["-d/", "-f2", "a.txt"], "api"),
    ("sort", ["-t/", "-k2", "a.txt"], "../x"),
    ("tr", ["/", "_"], ""),
    ("find", [".", "-name", "*.txt", "-path", "./*", "-perm", "/u+r"], "./a.txt"),
    ("find", [".", "-name", "a.txt", "-printf", "%p %y 100%%Y\\n"], "./a.txt f 100%Y"),
    ("diff", ["-r", "d1", "d2"], "Only in d2: extra"),
    ("stat", ["-c", "%n/%s", "a.txt"], "a.txt/"),
    ("ls", ["-I", "/x", "--hide=/y", "-d", "."], "."),
]


@pytest.mark.parametrize(("command", "args", "expected"), EVERYDAY)
async def test_everyday_uses_are_not_caught_by_the_rules(root, call, ok, command, args, expected):
    (root / "a.txt").write_text("/api/v1\n../x\n")
    for d in ("d1", "d2"):
        (root / d).mkdir()
        (root / d / "same").write_text("same\n")
    (root / "d2" / "extra").write_text("")
    text = ok(await call({"command": command, "args": args}))
    assert text.startswith("exit_code: ") and expected in text


async def test_diff_r_does_not_follow_links_out(root, outside, call, ok):
    for d in ("a", "b"):
        (root / d).mkdir()
    (outside / "other.txt").write_text("OTHER\n")
    (root / "a" / "link").symlink_to(outside / "secret.txt")
    (root / "b" / "link").symlink_to(outside / "other.txt")
    text = ok(await call({"command": "diff", "args": ["-r", "a", "b"]}))
    assert "TOP-SECRET" not in text and "OTHER" not in text
    assert "Symbolic links a/link and b/link differ" in text


class DenyDotEnv:
    @hookimpl
    def fsmcp_check_path(self, path, access, settings):
        return "secrets in .env files are off limits" if path.path.name == ".env" else None


async def test_the_checks_honour_path_vetoes_of_other_plugins(root, failure):
    (root / ".env").write_text("TOKEN=1\n")
    host = host_for([root], [("shell", fsmcp_shell.hooks), ("deny-env", DenyDotEnv())])
    async with connect(host) as client:
        code, message = failure(await client.call_tool("run_command", {"command": "cat", "args": [".env"]}))
    assert code == "ACCESS_DENIED" and "secrets in .env files are off limits" in message


async def test_a_policy_that_rewrites_relative_paths_checks_what_the_program_opens(root, outside, failure, ok):
    workspace_hooks = pytest.importorskip("fsmcp_workspace.hooks")
    # The workspace-relative policy reads workspace/x as x; the program opens ./workspace/x.
    (root / "workspace").symlink_to(outside)
    (root / "a.txt").write_text("inside\n")
    host = host_for([root], [("shell", fsmcp_shell.hooks), ("workspace", workspace_hooks)], policy="workspace")
    async with connect(host) as client:
        code, _ = failure(await client.call_tool("run_command", {"command": "cat", "args": ["workspace/secret.txt"]}))
        assert code == "ACCESS_DENIED"
        assert "inside" in ok(await client.call_tool("run_command", {"command": "cat", "args": ["a.txt"]}))
