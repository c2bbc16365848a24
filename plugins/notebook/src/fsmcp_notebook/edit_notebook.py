"""edit_notebook: cell edits applied in order to a copy, validated with nbformat, written at once or not at all."""

from __future__ import annotations

import copy
import json
import uuid
from typing import TYPE_CHECKING, Any

from fsmcp import Access, ErrorCode, ToolError, ToolResult, lines_withheld

from .notebook import Style, back, dump, parse, source_of, stored

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import CellEdit, EditNotebookInput


def edit_notebook(args: EditNotebookInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path, Access.WRITE)
    raw = ctx.fs.read_bytes(target)
    # allow_write lets a protected notebook be edited, never read: no error quotes what it holds.
    protected = ctx.is_protected(target)
    nb, style = parse(raw, target, protected=protected)
    edited = copy.deepcopy(nb)
    done = [_apply(edited, edit, n, style) for n, edit in enumerate(args.edits)]
    _validate(edited, target, protected)
    # Written in the version the file had, and valid in it.
    written = back(edited, style, json.loads(raw), target)
    if written is not edited:
        _validate(written, target, protected)
    data = dump(written, style)
    if not args.dry_run and data != raw:
        ctx.fs.write_atomic(target, data)
    how = "Would edit" if args.dry_run else "Edited"
    text = f"{how} {target}: now {len(edited['cells'])} cells\n" + "\n".join(done)
    if args.dry_run:
        text += "\n(dry run: nothing written)"
    return ToolResult.text(text, {"path": str(target), "cells": len(edited["cells"]), "dryRun": args.dry_run})


def _apply(nb: dict[str, Any], edit: CellEdit, n: int, style: Style) -> str:
    cells: list[dict[str, Any]] = nb["cells"]
    if edit.op == "insert":
        if edit.source is None:
            raise _bad(n, "insert needs source")
        at = len(cells) if edit.index is None else edit.index
        if at > len(cells):
            raise _bad(n, f"index {at} is past the end; insert at 0-{len(cells)}")
        cell = _new_cell(edit.cell_type or "code", edit.source, nb, style)
        cells.insert(at, cell)
        return f"inserted [{at}] {cell['cell_type']}" + (f" id={cell['id']}" if "id" in cell else "")
    at = _find(cells, edit, n)
    if edit.op == "delete":
        cell = cells.pop(at)
        return f"deleted [{at}] {cell.get('cell_type')}"
    if edit.op == "move":
        if edit.to is None or edit.to >= len(cells):
            raise _bad(n, f"move needs to: a new index 0-{len(cells) - 1}")
        cells.insert(edit.to, cells.pop(at))
        return f"moved [{at}] to [{edit.to}]"
    if edit.source is None and edit.cell_type is None:
        raise _bad(n, "replace needs source, cellType or both")
    old = cells[at]
    kind = edit.cell_type or old.get("cell_type", "code")
    text = source_of(old) if edit.source is None else edit.source
    # the cell stays itself, changed in place: its id, metadata, key order and the form of its source
    cell = dict(old, cell_type=kind, source=text.splitlines(keepends=True) if isinstance(old.get("source"), list) else text)
    cleared = False
    if kind == "code":
        cell.pop("attachments", None)  # code cells carry none in nbformat 4
        if old.get("cell_type") != "code" or source_of(old) != text:
            cleared = bool(old.get("outputs"))
            cell["outputs"], cell["execution_count"] = [], None
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    cells[at] = cell
    return f"replaced [{at}] {kind}" + (" (outputs cleared)" if cleared else "")


def _new_cell(kind: str, text: str, nb: dict[str, Any], style: Style) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind}
    # cell ids exist from nbformat 4.5 on; an older notebook would fail validation with one
    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) >= (4, 5):
        cell["id"] = uuid.uuid4().hex[:8]
    cell["metadata"] = {}
    cell["source"] = stored(text, style)
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def _find(cells: list[dict[str, Any]], edit: CellEdit, n: int) -> int:
    if edit.cell_id is not None:
        for i, cell in enumerate(cells):
            if cell.get("id") == edit.cell_id:
                return i
        raise _bad(n, f"no cell has id {edit.cell_id!r}; read_notebook shows the ids", ErrorCode.NOT_FOUND)
    if edit.index is None:
        raise _bad(n, f"{edit.op} needs index or cellId")
    if edit.index >= len(cells):
        raise _bad(n, f"index {edit.index} out of range: the notebook has {len(cells)} cells then")
    return edit.index


def _validate(nb: dict[str, Any], target: object, protected: bool) -> None:
    import nbformat  # imported at the first edit, not at start-up

    try:
        nbformat.validate(nb, version=nb.get("nbformat", 4), version_minor=nb.get("nbformat_minor"))
    except nbformat.ValidationError as exc:
        # nbformat's message quotes the offending value, which may be the file's own.
        why = lines_withheld("Why") if protected else exc.message
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{target}: the edited notebook would not be valid nbformat ({why}); nothing was written") from None


def _bad(n: int, message: str, code: ErrorCode = ErrorCode.INVALID_PARAMS) -> ToolError:
    return ToolError(code, f"edits[{n}]: {message}; nothing was written")
