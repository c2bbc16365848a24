"""Tools that declare an output model: structuredContent that validates against the advertised
outputSchema, and text that carries no second copy of the payload."""

import json

import jsonschema
import pytest

from fsmcp.testing import serve_stdio


@pytest.mark.anyio
async def test_structured_results_validate_against_their_output_schema(tmp_path):
    (tmp_path / "notes.txt").write_text("one two\nthree\n")
    (tmp_path / "link").symlink_to("notes.txt")
    calls = [
        ("get_file_info", {"path": "notes.txt"}),
        ("get_file_info", {"path": "link"}),
        ("list_allowed_directories", {}),
        ("write_file", {"path": "new/a.txt", "content": "hello"}),
        ("append_file", {"path": "new/a.txt", "content": "more"}),
        ("create_directory", {"path": "made"}),
        ("copy_file", {"source": "new/a.txt", "destination": "made/b.txt"}),
        ("move_file", {"source": "made/b.txt", "destination": "made/c.txt"}),
        ("delete_file", {"path": "made/c.txt"}),
        ("word_count", {"path": "notes.txt"}),
    ]
    async with serve_stdio(str(tmp_path)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        for name, args in calls:
            result = await client.call_tool(name, args)
            assert not result.is_error, (name, result.content)
            assert schemas[name], f"{name} declares no outputSchema"
            jsonschema.validate(result.structured_content, schemas[name])
            text = result.content[0].text
            # The text is the human answer, not a second serialisation of the structure.
            assert text != json.dumps(result.structured_content)
    # Tools whose text is the payload itself declare no output model.
    for name in ("read_file", "directory_tree", "list_directory", "read_multiple_files"):
        assert schemas[name] is None
