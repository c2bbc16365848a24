"""The host's own behaviour, with small plugins defined here and the real in-process client."""

import sys
import types as pytypes

import pytest
from mcp import types

from fsmcp import Access, DESTRUCTIVE, ErrorCode, READ_ONLY, Text, Tool, ToolError, ToolInput, ToolResult, hookimpl, truncate
from fsmcp.api.config import ConfigError, build_settings, load_toml
from fsmcp.run.host import HostError
from fsmcp.testing import connect, host_for, text_of


class PathInput(ToolInput):
    path: str
    head_lines: int | None = None


def peek(args, ctx):
    with ctx.fs.open_read(args.path) as fh:
        return fh.read().decode()


def touch(args, ctx):
    ctx.fs.write_atomic(args.path, b"touched")
    return f"wrote {ctx.fs.resolve(args.path, Access.WRITE)}"


def crash(args, ctx):
    raise RuntimeError("boom")


def missing(args, ctx):
    with ctx.fs.open_read(args.path):
        pass


async def async_echo(args, ctx):
    await ctx.aprogress(1, 1, "done")
    return ToolResult.text(f"async {args.path}")


def plugin(*tools: Tool) -> object:
    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        for tool in tools:
            register(tool)

    module.fsmcp_register_tools = fsmcp_register_tools
    return module


SAMPLE = plugin(
    Tool("peek", "Read a file.", PathInput, peek, READ_ONLY),
    Tool("touch", "Write a file.", PathInput, touch, DESTRUCTIVE),
    Tool("crash", "Always fails.", PathInput, crash, READ_ONLY),
    Tool("missing", "Opens a path.", PathInput, missing, READ_ONLY),
    Tool("async_echo", "An async tool.", PathInput, async_echo, READ_ONLY),
)


@pytest.fixture
def root(tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    return tmp_path


@pytest.mark.anyio
async def test_tools_list_carries_schemas_and_annotations(root):
    async with connect(host_for([root], [("sample", SAMPLE)])) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"peek", "touch", "crash", "missing", "async_echo"}
    schema = tools["peek"].input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert set(schema["properties"]) == {"path", "headLines"}  # camelCase on the wire
    assert "additionalProperties" not in schema  # the server refuses unknown names itself, and takes aliases
    assert "title" not in schema["properties"]["path"]
    assert tools["peek"].annotations.read_only_hint is True
    assert tools["peek"].annotations.open_world_hint is False
    assert tools["touch"].annotations.read_only_hint is False
    assert tools["touch"].annotations.destructive_hint is True


@pytest.mark.anyio
async def test_failures_are_error_results_and_the_server_keeps_serving(root):
    async with connect(host_for([root], [("sample", SAMPLE)])) as client:
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error and text_of(unknown).startswith("INVALID_PARAMS: unknown tool 'no_such_tool'")
        assert "peek" in text_of(unknown)
        wrong_type = await client.call_tool("peek", {"path": 5})
        assert wrong_type.is_error and text_of(wrong_type).startswith("INVALID_PARAMS: invalid arguments for peek: path:")
        no_field = await client.call_tool("peek", {})
        assert no_field.is_error and "path: required" in text_of(no_field)
        extra = await client.call_tool("peek", {"path": "a.txt", "bogus": 1})
        assert extra.is_error and "bogus: unknown parameter" in text_of(extra)
        boom = await client.call_tool("crash", {"path": "a.txt"})
        assert boom.is_error and text_of(boom).startswith("INTERNAL_ERROR: crash failed unexpectedly (RuntimeError: boom)")
        gone = await client.call_tool("missing", {"path": "nope.txt"})
        assert gone.is_error and text_of(gone).startswith("NOT_FOUND: ")
        ok = await client.call_tool("peek", {"path": "a.txt"})
        assert not ok.is_error and text_of(ok) == "hello"


@pytest.mark.anyio
async def test_async_tools_and_progress(root):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with connect(host_for([root], [("sample", SAMPLE)]), mode="legacy") as client:
        result = await client.call_tool("async_echo", {"path": "x"}, progress_callback=on_progress)
    assert text_of(result) == "async x"
    assert seen == [(1.0, 1.0, "done")]


@pytest.mark.anyio
async def test_read_only_setting_refuses_writes(root):
    # A tool that only changes is not offered; one that writes under a READ_ONLY label still cannot.
    mislabelled = plugin(Tool("sneak", "Claims to read.", PathInput, touch, READ_ONLY))
    async with connect(host_for([root], [("sample", SAMPLE), ("mislabelled", mislabelled)], read_only=True)) as client:
        offered = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("sneak", {"path": "a.txt"})
    assert "touch" not in offered and "peek" in offered
    assert result.is_error and text_of(result).startswith("READ_ONLY: ")
    assert (root / "a.txt").read_text() == "hello"


def test_duplicate_tool_names_name_both_plugins(root):
    twin = plugin(Tool("peek", "Another peek.", PathInput, peek, READ_ONLY))
    with pytest.raises(HostError) as info:
        host_for([root], [("sample", SAMPLE), ("twin", twin)])
    assert "'peek'" in str(info.value) and "'sample'" in str(info.value) and "'twin'" in str(info.value)


def test_bad_tool_names_are_refused(root):
    with pytest.raises(HostError, match="tool name 'bad name'"):
        host_for([root], [("bad", plugin(Tool("bad name", "x", PathInput, peek)))])


def test_enable_and_disable_by_plugin_and_tool(root):
    other = plugin(Tool("other_tool", "x", PathInput, peek))
    plugins = [("sample", SAMPLE), ("other", other)]
    assert set(host_for([root], plugins).tools) == {"peek", "touch", "crash", "missing", "async_echo", "other_tool"}
    assert set(host_for([root], plugins, disable=["sample"]).tools) == {"other_tool"}
    assert "touch" not in host_for([root], plugins, disable=["touch"]).tools
    assert set(host_for([root], plugins, enable=["other"]).tools) == {"other_tool"}
    assert set(host_for([root], plugins, enable=["peek", "other"]).tools) == {"peek", "other_tool"}
    assert set(host_for([root], plugins, enable=["sample"], disable=["crash"]).tools) == {"peek", "touch", "missing", "async_echo"}


def test_a_disabled_plugin_is_not_even_registered(root):
    host = host_for([root], [("sample", SAMPLE)], disable=["sample"])
    assert not host.pm.has_plugin("sample")
    assert [p.status for p in host.plugins if p.name == "sample"] == ["disabled"]


def test_unknown_policy_or_format_stops_start_up(root):
    with pytest.raises(HostError, match="path policy 'nope'"):
        host_for([root], [("sample", SAMPLE)], policy="nope")
    with pytest.raises(HostError, match="result format 'nope'"):
        host_for([root], [("sample", SAMPLE)], format="nope")


@pytest.mark.anyio
async def test_a_veto_plugin_refuses_paths(root):
    (root / ".env").write_text("TOKEN=1")
    veto = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_check_path(path, access):
        return "secrets files are off limits" if path.path.name == ".env" else None

    veto.fsmcp_check_path = fsmcp_check_path
    async with connect(host_for([root], [("sample", SAMPLE), ("veto", veto)])) as client:
        refused = await client.call_tool("peek", {"path": ".env"})
        allowed = await client.call_tool("peek", {"path": "a.txt"})
    assert refused.is_error and text_of(refused) == "ACCESS_DENIED: '.env' is refused: secrets files are off limits"
    assert "TOKEN" not in text_of(refused)
    assert text_of(allowed) == "hello"


@pytest.mark.anyio
async def test_a_formatter_plugin_takes_over_when_chosen(root):
    shouting = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_format_result(outcome, format):
        if format != "shout":
            return None
        if isinstance(outcome, ToolError):
            return types.CallToolResult(content=[types.TextContent(text=outcome.code.value)], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=p.text.upper()) for p in outcome.parts])

    shouting.fsmcp_format_result = fsmcp_format_result
    async with connect(host_for([root], [("sample", SAMPLE), ("shout", shouting)], format="shout")) as client:
        assert text_of(await client.call_tool("peek", {"path": "a.txt"})) == "HELLO"
        assert text_of(await client.call_tool("peek", {"path": "/etc/passwd"})) == "ACCESS_DENIED"


@pytest.mark.anyio
async def test_a_formatter_answers_with_the_wire_dict_and_a_wrapper_adjusts_it(root):
    """The ``plain`` formatter and the wrapper of docs/hooks.md, as written there."""
    plain, stamp = pytypes.SimpleNamespace(), pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_format_result(outcome, format, settings):
        if format != "plain":
            return None
        if isinstance(outcome, ToolError):
            return {"content": [{"type": "text", "text": f"{outcome.code.value}: {outcome.message}"}], "isError": True}
        text = "\n".join(part.text for part in outcome.parts if isinstance(part, Text))
        text, _ = truncate(text, settings.budget, "Ask for less: a narrower path or a range.")
        return {"content": [{"type": "text", "text": text}]}

    @hookimpl(wrapper=True)
    def stamped(tool):
        result = yield
        if tool is not None and result is not None:
            result["_meta"] = {"example.org/tool": tool.name}
        return result

    plain.fsmcp_format_result = fsmcp_format_result
    stamp.fsmcp_format_result = stamped
    async with connect(host_for([root], [("sample", SAMPLE), ("plain", plain), ("stamp", stamp)], format="plain")) as client:
        read = await client.call_tool("peek", {"path": "a.txt"})
        refused = await client.call_tool("peek", {"path": "/etc/passwd"})
    assert text_of(read) == "hello" and read.meta == {"example.org/tool": "peek"}
    assert refused.is_error and text_of(refused).startswith("ACCESS_DENIED: ")


@pytest.mark.anyio
async def test_a_function_named_as_module_colon_name_is_imported_at_the_first_call(root, tmp_path, monkeypatch):
    (tmp_path / "lazy_impl_for_test.py").write_text("import json\n\ndef peek(args, ctx):\n    return 'lazy ' + args.path\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    lazy = plugin(
        Tool("lazy", "Loads late.", PathInput, "lazy_impl_for_test:peek", READ_ONLY),
        Tool("gone", "Names no module.", PathInput, "no_such_module_for_test:peek", READ_ONLY),
    )
    host = host_for([root], [("lazy", lazy)])
    assert "lazy_impl_for_test" not in sys.modules
    async with connect(host) as client:
        assert text_of(await client.call_tool("lazy", {"path": "a.txt"})) == "lazy a.txt"
        gone = await client.call_tool("gone", {"path": "a.txt"})
    assert "lazy_impl_for_test" in sys.modules
    assert gone.is_error and text_of(gone).startswith("INTERNAL_ERROR: gone failed unexpectedly (ModuleNotFoundError")
    with pytest.raises(HostError, match="neither callable nor 'module:name'"):
        host_for([root], [("bad", plugin(Tool("bad", "No function.", PathInput, "not a reference", READ_ONLY)))])


@pytest.mark.anyio
async def test_the_budget_backstop_cuts_runaway_text(root):
    def flood(args, ctx):
        return "line\n" * 10_000

    async with connect(host_for([root], [("f", plugin(Tool("flood", "x", PathInput, flood)))], budget=2000)) as client:
        text = text_of(await client.call_tool("flood", {"path": "."}))
    assert len(text) <= 2000
    assert "[truncated: showed" in text and "of 50,000 characters (output budget 2,000)" in text


def test_config_file_and_command_line_merge(tmp_path):
    cfg = tmp_path / "fsmcp.toml"
    cfg.write_text('roots = ["data:ro"]\nread-only = true\ndisable = ["write", "shell"]\nbudget = 5000\n[plugins.shell]\nallow = ["ls"]\n')
    values = load_toml(cfg)
    assert values["roots"] == [str(tmp_path.resolve() / "data") + ":ro"]
    settings = build_settings(values, {"enable": ["write"], "disable": ["delete_file"], "budget": None, "read_only": None})
    assert settings.read_only is True
    assert settings.disable == ["shell", "delete_file"]
    assert settings.enable == ["write"]
    assert settings.budget == 5000
    assert settings.options("shell") == {"allow": ["ls"]}
    cfg.write_text("colour = 'red'\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_toml(cfg)
    with pytest.raises(ConfigError, match="budget"):
        build_settings({}, {"budget": 10})


def test_a_plugin_whose_hooks_do_not_match_is_skipped(root, caplog):
    misspelt = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tool(register):  # the spec is fsmcp_register_tools
        pass

    misspelt.fsmcp_register_tool = fsmcp_register_tool
    wrong_args = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register, colour):
        pass

    wrong_args.fsmcp_register_tools = fsmcp_register_tools
    host = host_for([root], [("sample", SAMPLE), ("misspelt", misspelt), ("wrong_args", wrong_args)])
    status = {p.name: p.status for p in host.plugins}
    assert status["misspelt"] == status["wrong_args"] == "failed"
    assert "peek" in host.tools
    err = caplog.text
    assert "plugin 'misspelt' (built in) was skipped: unknown hook 'fsmcp_register_tool'" in err
    assert "plugin 'wrong_args' (built in) was skipped: a hook implementation does not match its spec" in err


@pytest.mark.anyio
async def test_a_tool_with_an_output_model_returns_structured_content(root):
    from pydantic import BaseModel

    class Size(BaseModel):
        path: str
        bytes: int

    def size(args, ctx):
        st = ctx.fs.stat(args.path)
        return ToolResult.text(f"{st.st_size} bytes", {"path": args.path, "bytes": st.st_size})

    sizer = plugin(Tool("size", "Size of a file.", PathInput, size, READ_ONLY, output_model=Size))
    async with connect(host_for([root], [("sizer", sizer)])) as client:
        listed = (await client.list_tools()).tools[0]
        result = await client.call_tool("size", {"path": "a.txt"})
    assert listed.output_schema["properties"]["bytes"]["type"] == "integer"
    assert result.structured_content == {"path": "a.txt", "bytes": 5}
    assert text_of(result) == "5 bytes"


@pytest.mark.anyio
async def test_a_tool_can_run_other_offered_tools(root):
    async def twice(args, ctx):
        first = await ctx.run_tool("peek", {"path": args.path})
        missing = await ctx.run_tool("peek", {"path": "nope.txt"})
        unknown = await ctx.run_tool("crash_and_burn", {})
        return " | ".join([first.parts[0].text, missing.code.value, unknown.code.value])

    composite = plugin(Tool("twice", "x", PathInput, twice))
    async with connect(host_for([root], [("sample", SAMPLE), ("composite", composite)])) as client:
        result = await client.call_tool("twice", {"path": "a.txt"})
    assert text_of(result) == "hello | NOT_FOUND | INVALID_PARAMS"


@pytest.mark.anyio
async def test_no_policy_can_skip_the_required_workspace(root):
    lax = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_resolve_path(raw, access, follow_links, policy, roots):
        if policy != "lax":
            return None
        return roots.confine(raw, access, follow_links)  # forgets require_workspace

    lax.fsmcp_resolve_path = fsmcp_resolve_path
    async with connect(host_for([root], [("sample", SAMPLE), ("lax", lax)], policy="lax", require_workspace=True)) as client:
        result = await client.call_tool("peek", {"path": "a.txt"})
    assert result.is_error and "call set_workspace first" in text_of(result)
