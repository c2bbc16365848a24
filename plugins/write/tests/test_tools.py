"""What tools/list advertises: names, camelCase parameters with defaults, annotations, no aliases."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

V = ...  # optional, with no default advertised (a flag: off unless given)
EXPECTED = {
    # name: (parameters with their defaults (None: required), readOnly, destructive, idempotent)
    "write_file": ({"path": None, "content": None, "encoding": "utf-8", "lineCount": V, "expectedVersion": V}, False, True, True),
    "write_files": ({"files": None}, False, True, True),
    "append_file": ({"path": None, "content": None, "ensureNewline": True, "create": V, "expectedVersion": V}, False, True, False),
    "create_directory": ({"path": None, "recursive": True, "expectedVersion": V}, False, False, True),
    "copy_file": ({"source": None, "destination": None, "overwrite": V, "expectedVersion": V}, False, True, True),
    "move_file": ({"source": None, "destination": None, "overwrite": V, "expectedVersion": V}, False, True, False),
    "delete_file": ({"path": None, "recursive": V, "expectedVersion": V}, False, True, False),
}


async def test_tools_list_matches_the_reference(server):
    async with server() as s:
        listed = {t.name: t for t in (await s.client.list_tools()).tools}
    assert set(listed) == set(EXPECTED)
    for name, (params, read_only, destructive, idempotent) in EXPECTED.items():
        tool = listed[name]
        props = tool.input_schema["properties"]
        required = set(tool.input_schema.get("required", []))
        assert {k: v.get("default", None if k in required else V) for k, v in props.items()} == params, name
        assert sorted(tool.input_schema["required"]) == sorted(k for k, v in params.items() if v is None)
        assert "additionalProperties" not in tool.input_schema  # refused by the server, which takes aliases too
        # What the name does not say is described (a path, a version from get_file_info need not be).
        assert all(p.get("description") for k, p in props.items() if k not in ("path", "expectedVersion")), name
        a = tool.annotations
        # idempotentHint is left out when false, the spec's default.
        assert (a.read_only_hint, a.destructive_hint, bool(a.idempotent_hint), a.open_world_hint) == (
            read_only,
            destructive,
            idempotent,
            False,
        ), name


async def test_write_files_items_are_described_by_write_file_when_it_is_offered(server):
    """Offered beside write_file, write_files' items are plain objects (write_file describes them);
    without write_file, they carry write_file's fields themselves."""
    async with server() as s:
        items = {t.name: t for t in (await s.client.list_tools()).tools}["write_files"].input_schema["properties"]["files"]["items"]
    assert items == {"type": "object"}
    async with server(disable=["write_file"]) as s:
        listed = {t.name: t for t in (await s.client.list_tools()).tools}
    assert "write_file" not in listed
    items = listed["write_files"].input_schema["properties"]["files"]["items"]
    assert items["required"] == ["path", "content"]
    assert set(items["properties"]) == {"path", "content", "encoding", "lineCount", "expectedVersion"}
    assert all(p.get("description") for k, p in items["properties"].items() if k not in ("path", "expectedVersion"))
