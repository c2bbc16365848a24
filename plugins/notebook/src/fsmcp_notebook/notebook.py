"""A notebook file as JSON, and back in the same formatting: indent, key order, escapes, final newline."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fsmcp import ErrorCode, ToolError, lines_withheld


@dataclass(frozen=True)
class Style:
    indent: int | None
    sort_keys: bool
    ensure_ascii: bool
    final_newline: bool
    lists: bool  # multi-line text as a list of lines, as Jupyter writes it


def parse(raw: bytes, where: object, *, protected: bool = False) -> tuple[dict[str, Any], Style]:
    """The notebook and its formatting; for a ``protected`` file an error quotes none of its bytes."""
    try:
        nb = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if protected:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not notebook JSON. {lines_withheld('Where it fails')}") from None
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not notebook JSON ({exc}); read it with read_file") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} has no list of cells: not a Jupyter notebook (nbformat 4)")
    text = raw.decode("utf-8")
    indent = re.search(r"\{\n( +)\"", text)
    cells = nb["cells"]
    keys = [list(nb), *(list(c) for c in cells if isinstance(c, dict))]
    return nb, Style(
        indent=len(indent.group(1)) if indent else None,
        sort_keys=all(k == sorted(k) for k in keys),
        ensure_ascii=text.isascii() and "\\u" in text,
        final_newline=text.endswith("\n"),
        lists=any(isinstance(c.get("source"), list) for c in cells if isinstance(c, dict)) or not cells,
    )


def dump(nb: dict[str, Any], style: Style) -> bytes:
    text = json.dumps(nb, indent=style.indent, sort_keys=style.sort_keys, ensure_ascii=style.ensure_ascii)
    return (text + ("\n" if style.final_newline else "")).encode("utf-8")


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def stored(text: str, style: Style) -> str | list[str]:
    return text.splitlines(keepends=True) if style.lists else text
