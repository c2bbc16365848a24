"""read_notebook and edit_notebook through the real server (``fsmcp serve`` over stdio), found by their entry point."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n"


def varied() -> dict:
    """A notebook with every kind of cell and output: markdown with an attachment, raw, code with
    a stream, an image display, an execute result, an error; sorted keys, indent 1, as Jupyter writes."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}, "custom": {"keep": [1, 2]}})
    md = nbformat.v4.new_markdown_cell("# Title\n\n![dot](attachment:dot.png)", id="md1")
    md["attachments"] = {"dot.png": {"image/png": PNG}}
    raw = nbformat.v4.new_raw_cell("raw text é", id="raw1", metadata={"format": "text/x-rst"})
    code = nbformat.v4.new_code_cell("print('x' * 5000)\n1 + 1", id="code1", execution_count=3)
    code["outputs"] = [
        nbformat.v4.new_output("stream", name="stdout", text="x" * 5000 + "\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=3),
    ]
    plot = nbformat.v4.new_code_cell("plot()", id="plot1", execution_count=4, metadata={"tags": ["figure"]})
    plot["outputs"] = [
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure size 640x480>"}),
        nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=["tb"]),
    ]
    nb.cells = [md, raw, code, plot]
    return nb


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "nb.ipynb").write_text(nbformat.writes(varied()) + "\n")
    return root


def reread(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.reads(path.read_text(), as_version=4)
    nbformat.validate(nb)
    return nb


async def test_read_notebook_summarizes_cells_and_outputs(root):
    async with serve_stdio(str(root), "--enable", "notebook", "--budget", "20000") as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"read_notebook", "edit_notebook"}
        whole = text_of(await client.call_tool("read_notebook", {"path": "nb.ipynb"}))
        some = text_of(await client.call_tool("read_notebook", {"path": "nb.ipynb", "cells": [3], "outputs": False}))
        bad = await client.call_tool("read_notebook", {"path": "nb.ipynb", "cells": [9]})
    assert whole.splitlines()[0] == f"{root / 'nb.ipynb'} (nbformat 4.5, python3, 4 cells)"
    assert "[0] markdown id=md1 attachments: dot.png (image/png)\n# Title\n\n![dot](attachment:dot.png)" in whole
    assert "[1] raw id=raw1\nraw text é" in whole
    assert "[2] code id=code1 exec=3\nprint('x' * 5000)\n1 + 1\n--- stdout\n" + "x" * 1000 + "\n[output cut: 4,001 of 5,001 characters not shown" in whole
    assert "--- execute_result 3\n2" in whole
    assert f"--- display_data: image/png ({len(PNG):,} characters)\n<Figure size 640x480>" in whole
    assert "--- error ZeroDivisionError: division by zero" in whole
    assert PNG.strip() not in whole
    assert some.splitlines()[2:] == ["[3] code id=plot1 exec=4", "plot()", "--- 2 output(s) not shown"]
    assert bad.is_error and text_of(bad).startswith("INVALID_PARAMS: cells [9] out of range")


async def test_each_edit_op_keeps_formatting_metadata_and_validity(root):
    path = root / "nb.ipynb"
    before = path.read_bytes()
    async with serve_stdio(str(root), "--enable", "notebook", "--journal", "off") as client:
        dry = await client.call_tool(
            "edit_notebook", {"path": "nb.ipynb", "dryRun": True, "edits": [{"op": "delete", "index": 0}]}
        )
        assert not dry.is_error and "(dry run: nothing written)" in text_of(dry)
        assert path.read_bytes() == before
        steps = [
            [{"op": "insert", "index": 1, "source": "## Added\ntext", "cellType": "markdown"}],
            [{"op": "replace", "cellId": "code1", "source": "print(2)"}],
            [{"op": "move", "cellId": "plot1", "to": 0}],
            [{"op": "delete", "cellId": "raw1"}],
            [{"op": "replace", "index": 1, "cellType": "raw"}],
            [{"op": "insert", "source": "x = 1"}],
        ]
        states = []
        for edits in steps:
            result = await client.call_tool("edit_notebook", {"path": "nb.ipynb", "edits": edits})
            assert not result.is_error, text_of(result)
            states.append(reread(path))
    after_insert, after_replace, after_move, after_delete, after_retype, after_append = states
    assert [c.cell_type for c in after_insert.cells] == ["markdown", "markdown", "raw", "code", "code"]
    assert after_insert.cells[1].source == "## Added\ntext" and after_insert.cells[1].id
    replaced = after_replace.cells[3]
    assert (replaced.id, replaced.source, replaced.outputs, replaced.execution_count) == ("code1", "print(2)", [], None)
    assert [c.id for c in after_move.cells][0] == "plot1" and after_move.cells[0].outputs[0].output_type == "display_data"
    assert "raw1" not in [c.id for c in after_delete.cells]
    assert after_retype.cells[1].cell_type == "raw" and after_retype.cells[1].attachments == {"dot.png": {"image/png": PNG}}
    assert after_append.cells[-1].cell_type == "code" and after_append.cells[-1].source == "x = 1"
    assert after_append.metadata["custom"] == {"keep": [1, 2]} and after_append.cells[0].metadata == {"tags": ["figure"]}
    text = path.read_text()
    # Jupyter's own formatting: indent 1, sorted keys, sources as line lists, a final newline, é unescaped
    assert text == nbformat.writes(nbformat.reads(text, as_version=4)) + "\n"
    assert json.loads(text)["cells"][-1]["source"] == ["x = 1"] and '"## Added\\n",' in text


async def test_an_invalid_edit_changes_nothing(root):
    path = root / "nb.ipynb"
    before = path.read_bytes()
    async with serve_stdio(str(root), "--enable", "notebook") as client:
        out_of_range = await client.call_tool(
            "edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "delete", "index": 0}, {"op": "delete", "index": 7}]}
        )
        unknown_id = await client.call_tool("edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "delete", "cellId": "nope"}]})
        no_source = await client.call_tool("edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "insert"}]})
        (root / "old.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [{"cell_type": "code", "source": "1", "metadata": {}, "outputs": [], "execution_count": None, "bogus": 1}]}, indent=2))
        old_before = (root / "old.ipynb").read_bytes()
        invalid = await client.call_tool("edit_notebook", {"path": "old.ipynb", "edits": [{"op": "insert", "source": "2"}]})
        (root / "text.ipynb").write_text("not json")
        not_json = await client.call_tool("edit_notebook", {"path": "text.ipynb", "edits": [{"op": "delete", "index": 0}]})
    assert text_of(out_of_range).startswith("INVALID_PARAMS: edits[1]: index 7 out of range")
    assert text_of(unknown_id).startswith("NOT_FOUND: edits[0]: no cell has id 'nope'")
    assert text_of(no_source).startswith("INVALID_PARAMS: edits[0]: insert needs source")
    assert text_of(invalid).startswith("INVALID_PARAMS: ") and "would not be valid nbformat" in text_of(invalid)
    assert path.read_bytes() == before and (root / "old.ipynb").read_bytes() == old_before
    assert text_of(not_json).startswith("INVALID_PARAMS: ") and "is not notebook JSON" in text_of(not_json)
    assert (root / "text.ipynb").read_text() == "not json"


async def test_a_notebook_of_other_formatting_keeps_it_and_the_journal_undoes_the_edit(root, tmp_path):
    """Indent 2, keys in the file's own order, non-ASCII escaped, no final newline, sources as strings."""
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"z": 1, "a": {"kept": "ü"}},
        "cells": [
            {"id": "a1", "cell_type": "markdown", "source": "# Über", "metadata": {}},
            {"id": "b2", "cell_type": "code", "source": "1", "metadata": {}, "outputs": [], "execution_count": None},
        ],
    }
    path = root / "own.ipynb"
    original = json.dumps(nb, indent=2)
    path.write_text(original)
    async with serve_stdio(str(root), "--enable", "notebook,history", "--journal", str(tmp_path / "journal")) as client:
        edited = await client.call_tool("edit_notebook", {"path": "own.ipynb", "edits": [{"op": "replace", "cellId": "a1", "source": "# Straße"}]})
        after = path.read_text()
        undone = await client.call_tool("undo_change", {})
    assert not edited.is_error and not undone.is_error, (text_of(edited), text_of(undone))
    nb["cells"][0]["source"] = "# Straße"
    assert after == json.dumps(nb, indent=2)
    nbformat.validate(nbformat.reads(after, as_version=4))
    assert path.read_text() == original


def version_3() -> str:
    """A notebook as nbformat 3 wrote it: a worksheet, a heading cell, code with input/prompt_number
    and pyout, markdown, raw; the notebook's name in its metadata, as IPython 2 wrote them."""
    v3 = nbformat.v3
    nb = v3.new_notebook(name="analysis", metadata={"kernelspec": {"name": "python2", "display_name": "Python 2"}})
    sheet = v3.new_worksheet()
    sheet.cells += [
        v3.new_heading_cell("Results", level=2),
        v3.new_text_cell("markdown", source="Some *text*\nover two lines"),
        v3.new_code_cell(input="x = 1\nprint(x)", prompt_number=3, outputs=[v3.new_output("stream", output_text="1\n", stream="stdout"), v3.new_output("pyout", output_text="1", prompt_number=3)]),
        v3.new_text_cell("raw", source="raw text"),
    ]
    nb.worksheets.append(sheet)
    return nbformat.writes(nb, version=3)


def valid_as_it_is(path: Path) -> dict:
    """The file's notebook, valid for nbformat in the version it declares (no conversion)."""
    nb = nbformat.reads(path.read_text(), as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb, version=nb.nbformat, version_minor=nb.nbformat_minor)
    return nb


async def test_a_version_3_notebook_is_read_and_edited_and_stays_version_3(root, tmp_path):
    path = root / "old3.ipynb"
    path.write_text(version_3())
    original = path.read_text()
    async with serve_stdio(str(root), "--enable", "notebook,history", "--journal", str(tmp_path / "journal")) as client:
        read = text_of(await client.call_tool("read_notebook", {"path": "old3.ipynb"}))
        edited = await client.call_tool(
            "edit_notebook",
            {"path": "old3.ipynb", "edits": [{"op": "replace", "index": 2, "source": "x = 2\nprint(x)"}, {"op": "insert", "index": 1, "cellType": "markdown", "source": "New *note*"}]},
        )
        after = path.read_text()
        undone = await client.call_tool("undo_change", {})
    assert read.splitlines()[0] == f"{path} (nbformat 3.0, python2, 4 cells)", read
    assert "[0] markdown\n## Results" in read and "[2] code exec=3\nx = 1\nprint(x)\n--- stdout\n1\n--- execute_result 3\n1" in read, read
    assert "[3] raw\nraw text" in read and " id=" not in read, read
    assert not edited.is_error, text_of(edited)
    nb = nbformat.reads(after, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb, version=3)
    assert (nb.nbformat, nb.nbformat_minor) == (3, 0) and nb.metadata.name == "analysis"
    cells = nb.worksheets[0].cells
    assert [c.cell_type for c in cells] == ["heading", "markdown", "markdown", "code", "raw"]
    assert cells[0].source == "Results" and cells[0].level == 2  # the untouched heading stays a heading
    assert cells[1].source == "New *note*" and cells[3].input == "x = 2\nprint(x)" and cells[3].outputs == []
    # Only what was edited changed: the same file, but for the two cells, as version 3 writes it.
    expected = nbformat.reads(original, as_version=nbformat.NO_CONVERT)
    expected.worksheets[0].cells[2].input, expected.worksheets[0].cells[2].outputs = "x = 2\nprint(x)", []
    expected.worksheets[0].cells[2].prompt_number = None  # not run since: as nbformat downgrades execution_count
    expected.worksheets[0].cells.insert(1, nbformat.v3.new_text_cell("markdown", source="New *note*"))
    assert after == nbformat.writes(expected, version=3), after
    assert not undone.is_error and path.read_text() == original


async def test_older_4_minors_are_edited_in_their_own_minor_and_other_versions_are_refused_saying_which(root):
    old = {"nbformat": 4, "nbformat_minor": 0, "metadata": {}, "cells": [{"cell_type": "markdown", "source": "a", "metadata": {}}]}
    (root / "old40.ipynb").write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")
    (root / "v2.ipynb").write_text(json.dumps({"nbformat": 2, "nbformat_minor": 0, "metadata": {}, "worksheets": []}))
    three = json.loads(version_3())
    three["worksheets"].append({"cells": [], "metadata": {}})
    (root / "sheets.ipynb").write_text(json.dumps(three, indent=1, sort_keys=True))
    async with serve_stdio(str(root), "--enable", "notebook") as client:
        edited = await client.call_tool("edit_notebook", {"path": "old40.ipynb", "edits": [{"op": "insert", "source": "print(1)"}]})
        v2 = await client.call_tool("read_notebook", {"path": "v2.ipynb"})
        sheets_read = await client.call_tool("read_notebook", {"path": "sheets.ipynb"})
        sheets_edit = await client.call_tool("edit_notebook", {"path": "sheets.ipynb", "edits": [{"op": "delete", "index": 0}]})
    assert not edited.is_error, text_of(edited)
    nb = valid_as_it_is(root / "old40.ipynb")
    assert (nb.nbformat, nb.nbformat_minor) == (4, 0) and [c.cell_type for c in nb.cells] == ["markdown", "code"]
    assert "id" not in nb.cells[1]  # ids are 4.5's
    assert text_of(v2).startswith("INVALID_PARAMS: ") and "nbformat 2" in text_of(v2) and "cannot write back" in text_of(v2), text_of(v2)
    assert not sheets_read.is_error and "(nbformat 3.0, python2, 4 cells)" in text_of(sheets_read)
    assert text_of(sheets_edit).startswith("INVALID_PARAMS: ") and "2 worksheets" in text_of(sheets_edit), text_of(sheets_edit)
    assert json.loads((root / "sheets.ipynb").read_text()) == three
