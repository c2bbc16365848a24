"""`--format json`: the envelope for every success and every error code."""

import json
import types as pytypes

import jsonschema
import pytest

from fsmcp import Blob, ErrorCode, READ_ONLY, Text, Tool, ToolError, ToolInput, ToolResult, hookimpl
from fsmcp.testing import connect, host_for, serve_stdio, text_of

ENVELOPE = {
    "oneOf": [
        {"type": "object", "required": ["ok", "data"], "additionalProperties": False,
         "properties": {"ok": {"const": True}, "data": {}}},
        {"type": "object", "required": ["ok", "error"], "additionalProperties": False,
         "properties": {"ok": {"const": False},
                        "error": {"type": "object", "required": ["code", "message", "details"], "additionalProperties": False,
                                  "properties": {"code": {"enum": [c.value for c in ErrorCode]},
                                                 "message": {"type": "string", "minLength": 1},
                                                 "details": {"type": "object"}}}}},
    ]
}


class CodeInput(ToolInput):
    code: str


def fail_with(args, ctx):
    raise ToolError(ErrorCode(args.code), f"failing with {args.code} on purpose", {"asked": args.code})


def picture(args, ctx):
    return ToolResult([Blob(b"\x89PNG\r\n\x1a\n", "image/png"), Text("a picture")], {"bytes": 8})


def plain(args, ctx):
    return "just text"


def plugin():
    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("fail_with", "x", CodeInput, fail_with, READ_ONLY))
        register(Tool("picture", "x", CodeInput, picture, READ_ONLY))
        register(Tool("plain", "x", CodeInput, plain, READ_ONLY))

    module.fsmcp_register_tools = fsmcp_register_tools
    return module


def envelope(result) -> dict:
    document = json.loads(result.content[0].text)
    jsonschema.validate(document, ENVELOPE)
    return document


@pytest.mark.anyio
async def test_every_error_code_in_the_envelope(tmp_path):
    async with connect(host_for([tmp_path], [("codes", plugin())], format="json")) as client:
        for code in ErrorCode:
            result = await client.call_tool("fail_with", {"code": code.value})
            assert result.is_error
            assert envelope(result) == {"ok": False, "error": {"code": code.value, "message": f"failing with {code.value} on purpose", "details": {"asked": code.value}}}
        invalid = await client.call_tool("fail_with", {})
        assert envelope(invalid)["error"]["code"] == "INVALID_PARAMS"
        unknown = await client.call_tool("nope", {})
        assert envelope(unknown)["error"]["code"] == "INVALID_PARAMS"


@pytest.mark.anyio
async def test_success_envelopes(tmp_path):
    async with connect(host_for([tmp_path], [("codes", plugin())], format="json")) as client:
        pic = await client.call_tool("picture", {"code": "x"})
        text = await client.call_tool("plain", {"code": "x"})
    assert envelope(pic) == {"ok": True, "data": {"bytes": 8}}
    assert pic.content[1].type == "image" and pic.content[1].mime_type == "image/png"
    assert envelope(text) == {"ok": True, "data": {"text": "just text"}}


@pytest.mark.anyio
async def test_other_servers_calls_through_the_real_tools_answer_in_the_envelope(tmp_path):
    (tmp_path / "notes.txt").write_text("some notes\n")
    (tmp_path / "big.txt").write_text("x" * 100)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / "a.txt").write_text("a")
    (tmp_path / "tmp" / "b.txt").write_text("b")
    async with serve_stdio(str(tmp_path), "--format", "json") as client:
        async def call(tool, args):
            return envelope(await client.call_tool(tool, args))

        assert (await call("read_file", {"file": "notes.txt"}))["ok"] is True
        assert (await call("read_file", {"file": "/etc/passwd"}))["error"]["code"] == "ACCESS_DENIED"
        assert (await call("read_file", {"file": "big.txt", "maxBytes": 16}))["error"]["code"] == "FILE_TOO_LARGE"
        assert (await call("write_file", {"file": "src/index.html", "content": "<h1>Hi</h1>"}))["ok"] is True
        assert (await call("write_file", {"file": "../x.txt", "content": "x"}))["error"]["code"] == "ACCESS_DENIED"
        assert (await call("delete_file", {"path": "tmp/a.txt"}))["data"]["deletedType"] == "file"
        assert (await call("delete_file", {"path": "tmp", "recursive": False}))["error"]["code"] == "DIRECTORY_NOT_EMPTY"
        assert (await call("move_file", {"from": "notes.txt", "to": "archive/notes.txt"}))["ok"] is True
        (tmp_path / "c.txt").write_text("c")
        assert (await call("move_file", {"from": "c.txt", "to": "big.txt", "overwrite": False}))["error"]["code"] == "ALREADY_EXISTS"
        assert (await call("edit_file", {"file": "big.txt", "find": "missing", "replace": "x"}))["error"]["code"] == "PATTERN_NOT_FOUND"
        assert (await call("edit_file", {"file": "src/index.html", "find": "Hi", "replace": "Yo", "expectedOccurrences": 2}))["error"]["code"] == "EDIT_CONFLICT"
    assert (tmp_path / "src" / "index.html").read_text() == "<h1>Hi</h1>"


@pytest.mark.anyio
async def test_data_too_large_for_the_budget_falls_back_to_the_cut_text(tmp_path):
    def huge(args, ctx):
        return ToolResult([Text("short text")], {"blob": "y" * 50_000})

    module = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_register_tools(register):
        register(Tool("huge", "x", CodeInput, huge, READ_ONLY))

    module.fsmcp_register_tools = fsmcp_register_tools
    async with connect(host_for([tmp_path], [("huge", module)], format="json", budget=5000)) as client:
        result = await client.call_tool("huge", {"code": "x"})
    assert len(text_of(result)) <= 5000
    assert envelope(result) == {"ok": True, "data": {"text": "short text", "truncated": True}}
