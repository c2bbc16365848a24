"""The real `fsmcp serve` over stdio, driven by the mcp SDK's own client."""

import json
import subprocess
import sys

import pytest

from fsmcp.testing import forked, serve_stdio, text_of

READ_TOOLS = {"read_file", "read_multiple_files", "list_directory", "directory_tree", "get_file_info", "list_allowed_directories"}
WRITE_TOOLS = {"write_file", "write_files", "append_file", "create_directory", "copy_file", "move_file", "delete_file"}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_list_over_stdio(tmp_path, mode):
    async with serve_stdio(str(tmp_path), "--enable", "read,write", mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    for name, tool in tools.items():
        assert tool.description, name
        assert tool.input_schema["type"] == "object", name
        assert tool.annotations.open_world_hint is False, name
        assert tool.annotations.read_only_hint is (name in READ_TOOLS), name
        if name in WRITE_TOOLS:
            assert tool.annotations.destructive_hint is not None, name
    assert tools["read_file"].input_schema["required"] == ["path"]
    assert set(tools["write_file"].input_schema["required"]) == {"path", "content"}
    assert tools["delete_file"].annotations.destructive_hint is True


@pytest.mark.anyio
async def test_bad_calls_get_error_results_and_the_server_keeps_serving(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    async with serve_stdio(str(tmp_path)) as client:
        for name, args, expected in [
            ("read_file", {"path": 42}, "INVALID_PARAMS: invalid arguments for read_file: path:"),
            ("read_file", {}, "INVALID_PARAMS: invalid arguments for read_file: path: required"),
            ("write_file", {"path": "b.txt"}, "INVALID_PARAMS: invalid arguments for write_file: content: required"),
            ("read_file", {"path": "a.txt", "colour": "red"}, "INVALID_PARAMS: invalid arguments for read_file: colour: unknown parameter"),
            ("launch_rockets", {}, "INVALID_PARAMS: unknown tool 'launch_rockets'"),
            ("read_file", {"path": "missing.txt"}, "NOT_FOUND: "),
        ]:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            assert text_of(result).startswith(expected), text_of(result)
        ok = await client.call_tool("read_file", {"path": "a.txt"})
        assert not ok.is_error and text_of(ok) == "alpha\n"


@pytest.mark.anyio
async def test_a_write_and_read_round_trip(tmp_path):
    async with serve_stdio(str(tmp_path)) as client:
        wrote = await client.call_tool("write_file", {"path": "deep/new/file.txt", "content": "hello\r\nworld"})
        assert not wrote.is_error, text_of(wrote)
        back = await client.call_tool("read_file", {"path": "deep/new/file.txt"})
    assert (tmp_path / "deep" / "new" / "file.txt").read_bytes() == b"hello\r\nworld"
    assert text_of(back) == "hello\r\nworld"


@pytest.fixture(scope="module")
def big_world(tmp_path_factory):
    top = tmp_path_factory.mktemp("big")
    tree = top / "tree"
    for d in range(200):
        sub = tree / f"dir{d:03}" / "nested"
        sub.mkdir(parents=True)
        for f in range(100):
            (sub / f"file_{f:03}.txt").write_bytes(b"")
    log = top / "huge.log"
    line = b"2026-11-21T12:00:00Z INFO request served in 12ms by worker 7, path=/api/items\n"
    with open(log, "wb") as fh:
        block = line * 10_000
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(block)
    return top


@pytest.mark.anyio
async def test_output_budget_holds_for_a_20000_file_tree_and_a_50_mb_file(big_world):
    async with serve_stdio(str(big_world)) as client:
        tree = await client.call_tool("directory_tree", {"path": "tree"})
        read = await client.call_tool("read_file", {"path": "huge.log"})
        assert not tree.is_error and not read.is_error
        tree_text = text_of(tree)
        assert len(tree_text) <= 80_000
        json.loads(tree.content[0].text)  # still valid JSON
        assert "truncated" in tree_text
        read_text = text_of(read)
        assert len(read_text) <= 80_000
        assert "truncated" in read_text and "startLine=" in read_text
        # The continuation it names works.
        next_line = int(read_text.rsplit("startLine=", 1)[1].split(")")[0].split()[0].rstrip(".,;"))
        more = await client.call_tool("read_file", {"path": "huge.log", "startLine": next_line, "endLine": next_line + 2})
        assert text_of(more).startswith("2026-11-21T12:00:00Z INFO")


def run_cli(*args, cwd=None):
    # Forked from the test process's fork server: an interpreter's start and its imports spared.
    return subprocess.run(forked(*args), capture_output=True, text=True, cwd=cwd, timeout=60)


def test_cli_lists_tools_and_plugins(tmp_path):
    tools = run_cli("tools", str(tmp_path), "--disable", "write")
    assert tools.returncode == 0, tools.stderr
    names = {line.split()[0] for line in tools.stdout.splitlines()}
    assert READ_TOOLS <= names and not (WRITE_TOOLS & names)
    plugins = run_cli("plugins", str(tmp_path), "--disable", "write,read_file")
    assert plugins.returncode == 0
    lines = {line.split()[0]: line for line in plugins.stdout.splitlines()}
    assert "fsmcp-read 0.1.0" in lines["read"] and "read_file (disabled)" in lines["read"]
    assert "disabled" in lines["write"]
    assert "built in" in lines["fsmcp.roots"]


def test_plugins_left_out_by_enable_or_disable_are_never_imported(tmp_path):
    """A plugin the operator leaves out costs nothing at start-up: its module is not imported."""

    def imported(*args: str) -> set[str]:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "fsmcp", "tools", str(tmp_path), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "fsmcp_" in line}

    assert imported("--enable", "read") == {"fsmcp_read"}
    assert "fsmcp_write" not in imported("--disable", "write")
    # A tool name could be anyone's: then every plugin is imported to find it.
    assert {"fsmcp_read", "fsmcp_write", "fsmcp_search"} <= imported("--enable", "read,write_file")
    plugins = {line.split()[0]: line for line in run_cli("plugins", str(tmp_path), "--enable", "read").stdout.splitlines()}
    assert plugins["write"].split()[-1] == "disabled" and "enabled" in plugins["read"]


def test_cli_start_up_errors_exit_2(tmp_path):
    missing = run_cli("tools", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no usable root directory" in missing.stderr
    cfg = tmp_path / "fsmcp.toml"
    cfg.write_text("colour = 'red'\n")
    bad = run_cli("tools", "--config", str(cfg))
    assert bad.returncode == 2 and "unknown setting(s) colour" in bad.stderr
    fmt = run_cli("tools", str(tmp_path), "--format", "yaml")
    assert fmt.returncode == 2 and "result format 'yaml'" in fmt.stderr


def test_config_file_sets_roots_relative_to_itself(tmp_path):
    (tmp_path / "data").mkdir()
    cfg = tmp_path / "fsmcp.toml"
    cfg.write_text('roots = ["data:ro"]\ndisable = ["write"]\n')
    out = run_cli("tools", "--config", str(cfg), cwd="/")
    assert out.returncode == 0, out.stderr
    assert "write_file" not in out.stdout and "read_file" in out.stdout


@pytest.mark.anyio
async def test_serve_defaults_to_the_current_directory(tmp_path):
    async with serve_stdio(cwd=tmp_path) as client:
        listing = await client.call_tool("list_allowed_directories", {})
    assert text_of(listing) == f"{tmp_path.resolve()} (read-write)"


@pytest.mark.anyio
async def test_edit_and_patch_over_stdio(tmp_path):
    target = tmp_path / "app.py"
    target.write_bytes(b"x = 1\r\nfoo()\r\ny = 2\r\nfoo()\r\n")
    before = target.read_bytes()
    async with serve_stdio(str(tmp_path)) as client:
        dup = await client.call_tool("edit_file", {"path": "app.py", "edits": [{"oldText": "foo()", "newText": "bar()"}]})
        assert dup.is_error and text_of(dup).startswith("NOT_UNIQUE: ")
        assert "2" in text_of(dup) and "4" in text_of(dup)
        assert target.read_bytes() == before
        preview = await client.call_tool("edit_file", {"path": "app.py", "dryRun": True, "edits": [{"oldText": "x = 1", "newText": "x = 10"}]})
        assert "-x = 1" in text_of(preview) and "+x = 10" in text_of(preview)
        assert target.read_bytes() == before
        patch = "--- a/app.py\n+++ b/app.py\n@@ -2,2 +2,2 @@\n foo()\n-y = 2\n+y = 3\n"
        applied = await client.call_tool("patch_apply", {"patch": patch})
        assert not applied.is_error, text_of(applied)
    assert target.read_bytes() == b"x = 1\r\nfoo()\r\ny = 3\r\nfoo()\r\n"
