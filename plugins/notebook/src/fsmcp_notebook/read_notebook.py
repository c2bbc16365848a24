"""read_notebook: cells as numbered, typed blocks; outputs summarized, images named."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsmcp import ErrorCode, ToolError, ToolResult, truncate

from .notebook import parse, source_of

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import ReadNotebookInput


def read_notebook(args: ReadNotebookInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path)
    nb, style = parse(ctx.fs.read_bytes(target), target)
    cells = nb["cells"]
    wanted = range(len(cells)) if args.cells is None else args.cells
    if bad := [i for i in wanted if not 0 <= i < len(cells)]:
        raise ToolError(ErrorCode.INVALID_PARAMS, f"cells {bad} out of range: {target} has {len(cells)} cells (0-{len(cells) - 1})")
    # one output's text gets a twentieth of the budget: enough to see what it says, never all of it
    per_output = max(400, ctx.budget // 20)
    meta = nb.get("metadata", {})
    kernel = (meta.get("kernelspec") or {}).get("name") or (meta.get("language_info") or {}).get("name") or "no kernel"
    blocks = [f"{target} (nbformat {style.version[0]}.{style.version[1]}, {kernel}, {len(cells)} cells)"]
    for i in wanted:
        blocks.append(_cell(i, cells[i], args.outputs, per_output))
    text, _ = truncate("\n\n".join(blocks), ctx.budget, "Pass cells: [...] to read the others.")
    data = [{"index": i, "cellType": cells[i].get("cell_type"), "id": cells[i].get("id")} for i in wanted]
    return ToolResult.text(text, {"path": str(target), "cells": data})


def _cell(index: int, cell: dict[str, Any], outputs: bool, per_output: int) -> str:
    kind = cell.get("cell_type", "?")
    head = f"[{index}] {kind}"
    if cell.get("id"):
        head += f" id={cell['id']}"
    if kind == "code":
        head += f" exec={cell.get('execution_count') or '-'}"
    if attachments := cell.get("attachments"):
        head += " attachments: " + ", ".join(f"{name} ({', '.join(kinds)})" for name, kinds in attachments.items())
    lines = [head, source_of(cell)]
    if outputs:
        lines += [_output(o, per_output) for o in cell.get("outputs", [])]
    elif cell.get("outputs"):
        lines.append(f"--- {len(cell['outputs'])} output(s) not shown")
    return "\n".join(lines)


def _output(output: dict[str, Any], limit: int) -> str:
    kind = output.get("output_type", "?")
    if kind == "stream":
        return f"--- {output.get('name', 'stream')}\n" + _cut(_text(output.get("text", "")), limit)
    if kind == "error":
        return f"--- error {output.get('ename')}: {output.get('evalue')}"
    data = output.get("data", {})
    named = [f"{mime} ({len(_text(value)):,} characters)" for mime, value in data.items() if not _readable(mime)]
    head = f"--- {kind}" + (f" {output['execution_count']}" if output.get("execution_count") else "")
    if named:
        head += ": " + ", ".join(named)
    shown = next((_text(data[m]) for m in ("text/plain", "text/markdown", "text/html", "application/json") if m in data), "")
    return head + ("\n" + _cut(shown, limit) if shown else "")


def _readable(mime: str) -> bool:
    return mime.startswith("text/") or mime == "application/json"


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(value)
    return value if isinstance(value, str) else str(value)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text.rstrip("\n")
    return text[:limit].rstrip("\n") + f"\n[output cut: {len(text) - limit:,} of {len(text):,} characters not shown; read_file the .ipynb for all]"
