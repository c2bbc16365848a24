"""One name for one idea, in the user's words: the names a model guesses first reach the tool,
and a wrong argument is answered in terms of the parameter, never the validator's — over stdio,
against the real server with every plugin."""

from __future__ import annotations

import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

# What pydantic says to a Python programmer; a model reading it learns nothing it can act on.
VALIDATOR_WORDS = ("Input should", "should be", ".none", ".str", "union_tag", "Value error", "constrained-", "function-", "list[", "Field required", "Extra inputs", "valid dictionary")


async def test_a_search_under_a_directory_takes_the_same_names_in_every_tool(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hello.txt").write_text("hello\n")
    (tmp_path / "top.txt").write_text("hello\n")
    sub = str(tmp_path / "sub")
    async with serve_stdio(str(tmp_path)) as client:
        # The first call: grep_files takes pattern as search_files and glob_search do,
        # and without directory or globs searches the workspace as they do.
        text = text_of(await client.call_tool("grep_files", {"pattern": "hello"}))
        assert text.splitlines() == [f"{tmp_path}/sub/hello.txt:1:hello", f"{tmp_path}/top.txt:1:hello", "[2 matches]"]
        for name in ("directory", "path", "dir"):
            found = {
                "grep_files": await client.call_tool("grep_files", {"pattern": "hello", name: sub}),
                "search_files": await client.call_tool("search_files", {"pattern": "hello", name: sub}),
                "glob_search": await client.call_tool("glob_search", {"pattern": "*.txt", name: sub}),
                "list_directory": await client.call_tool("list_directory", {name: sub}),
                "directory_tree": await client.call_tool("directory_tree", {name: sub}),
            }
            for tool, result in found.items():
                assert not result.is_error, (tool, name, text_of(result))
                assert "hello.txt" in text_of(result) and "top.txt" not in text_of(result), (tool, name, text_of(result))
        # The canonical name wins over an alias given beside it.
        both = text_of(await client.call_tool("grep_files", {"regex": "top|hello", "pattern": "nothing-matches-this", "directory": sub}))
        assert both.splitlines() == [f"{tmp_path}/sub/hello.txt:1:hello", "[1 matches]"]
        for name in ("timeout", "wait"):
            watched = await client.call_tool("watch_file", {"path": sub, name: 0})
            assert not watched.is_error, (name, text_of(watched))
            refused = text_of(await client.call_tool("watch_file", {"path": sub, name: -1}))
            # Said in the client's own name for it.
            assert refused.startswith("INVALID_PARAMS") and f"{name} (waitSeconds): must be 0 or more, not -1" in refused, refused
        refused = text_of(await client.call_tool("grep_files", {"pattern": 5}))
        assert "pattern (regex): must be a string, not 5" in refused, refused


def _bad_values(schema: dict) -> list:
    """Values the parameter's schema refuses: of another kind, past a bound, outside an enum."""
    kind = schema.get("type")
    bad: list = [{"an": "object"}] if kind != "object" else [5]
    if kind in ("integer", "number"):
        bad.append("x")
        if kind == "integer":
            bad.append(1.5)
        if "minimum" in schema:
            bad.append(schema["minimum"] - 1)
        if "exclusiveMinimum" in schema:
            bad.append(schema["exclusiveMinimum"])
        if "maximum" in schema:
            bad.append(schema["maximum"] + 1)
    elif kind == "boolean":
        bad += ["x", 2]
    elif kind == "string":
        bad += [5, ["x"], False]
        if "enum" in schema:
            bad.append("no-such-choice")
    elif kind == "array":
        bad += ["x" if schema.get("items", {}).get("type") != "string" else 5, [{"an": "object"}]]
        if "maxItems" in schema:
            bad.append(["x"] * (schema["maxItems"] + 1))
        if schema.get("items", {}).get("enum"):
            bad.append(["no-such-choice"])
    elif "anyOf" in schema:
        bad += [5, True]
    return bad


def _placeholder(schema: dict):
    return {"string": "p.txt", "array": ["p.txt"], "object": {}, "integer": 1, "number": 1}.get(schema.get("type"), "p.txt")


async def test_every_wrong_argument_of_every_tool_is_answered_in_the_parameters_words(tmp_path):
    async with serve_stdio(str(tmp_path)) as client:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 30
        calls = 0
        for tool in tools:
            properties = tool.input_schema.get("properties", {})
            required = {name: _placeholder(properties[name]) for name in tool.input_schema.get("required", [])}
            cases = [(name, {**required, name: value}) for name, schema in properties.items() for value in _bad_values(schema)]
            # A field of a list's items, as a client writes it (edits, operations, files).
            for name, schema in properties.items():
                item = schema.get("items", {})
                for field, field_schema in item.get("properties", {}).items():
                    for value in _bad_values(field_schema):
                        cases.append((f"{name}.0.{field}", {**required, name: [{field: value}]}))
            for where, args in cases:
                result = await client.call_tool(tool.name, args)
                text = text_of(result)
                calls += 1
                assert result.is_error and text.startswith("INVALID_PARAMS: "), (tool.name, args, text)
                assert f"{where}: " in text or f"{where}.0" in text, (tool.name, args, text)
                assert not [w for w in VALIDATOR_WORDS if w in text], (tool.name, args, text)
        # The issue's own case, and an item of a list that is no model (write_files' files).
        text = text_of(await client.call_tool("write_files", {"files": [{"path": "a.txt", "content": "x\n", "lineCount": -1}]}))
        assert "files.0.lineCount: must be 0 or more, not -1" in text, text
        text = text_of(await client.call_tool("write_file", {"path": "a.txt", "content": "x\n", "lineCount": "many"}))
        assert "lineCount: must be a whole number, not \"many\"" in text, text
        text = text_of(await client.call_tool("batch_operations", {"operations": [{"tool": "read_file", "arguments": 5}]}))
        assert "operations.0.arguments: must be an object, not 5" in text, text
    assert calls > 300


def test_the_tool_list_costs_at_most_0_8_of_the_reference_servers_per_tool():
    """Every definition goes to the model in every request; fsmcp tools says what they cost."""
    import subprocess
    import sys

    # The tools fsmcp ships: the plugin template the tests install is an example, not one of them.
    done = subprocess.run([sys.executable, "-m", "fsmcp", "tools", "--disable", "wordcount"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    sizes = [int(line.split()[-1].replace(",", "")) for line in done.stdout.splitlines()]
    assert len(sizes) >= 32
    last = done.stderr.strip().splitlines()[-1]
    mean = sum(sizes) / len(sizes)
    assert last == f"fsmcp: {len(sizes)} tools, {sum(sizes):,} characters of definitions ({mean:,.0f} per tool; {mean / 974:.2f}x the reference server's 974)"
    assert mean <= 0.8 * 974, last
