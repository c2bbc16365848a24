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
    version: tuple[int, int]  # the file's nbformat: written back in it


def parse(raw: bytes, where: object, *, protected: bool = False) -> tuple[dict[str, Any], Style]:
    """The notebook as nbformat 4, whatever version the file has, and its formatting; for a
    ``protected`` file an error quotes none of its bytes."""
    try:
        nb = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if protected:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not notebook JSON. {lines_withheld('Where it fails')}") from None
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not notebook JSON ({exc}); read it with read_file") from None
    if not isinstance(nb, dict):
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not a Jupyter notebook (its JSON is no object); read it with read_file")
    major, minor = nb.get("nbformat"), nb.get("nbformat_minor", 0)
    if major == 3 and isinstance(nb.get("worksheets"), list):
        cells = [c for ws in nb["worksheets"] if isinstance(ws, dict) for c in ws.get("cells", [])]
    elif major == 4 and isinstance(nb.get("cells"), list):
        cells = nb["cells"]
    else:
        why = "no list of cells" if major in (3, 4) else "a version nbformat cannot write back"
        if protected and not isinstance(major, int):  # the version is the file's own text then
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not a Jupyter notebook of nbformat 3 or 4 ({why}). {lines_withheld('Its version')}")
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{where} is not a Jupyter notebook of nbformat 3 or 4 (nbformat {major!r}: {why}); read it with read_file")
    text = raw.decode("utf-8")
    indent = re.search(r"\{\n( +)\"", text)
    keys = [list(nb), *(list(c) for c in cells if isinstance(c, dict))]
    style = Style(
        indent=len(indent.group(1)) if indent else None,
        sort_keys=all(k == sorted(k) for k in keys),
        ensure_ascii=text.isascii() and "\\u" in text,
        final_newline=text.endswith("\n"),
        # Version 3 is edited as nbformat's upgrade gives it (strings), and split as it is written back.
        lists=major == 4 and (any(isinstance(c.get("source"), list) for c in cells if isinstance(c, dict)) or not cells),
        version=(major, minor if isinstance(minor, int) else 0),
    )
    return (_upgraded(text, where, protected) if major == 3 else nb), style


def _upgraded(text: str, where: object, protected: bool) -> dict[str, Any]:
    """A version 3 notebook as nbformat 4, by nbformat's own conversion, without the cell ids
    it makes up: they would differ at every read, and version 3 cannot keep them."""
    import nbformat  # imported at the first old notebook, not at start-up

    try:
        upgraded = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises what its converters meet
        why = lines_withheld("Why") if protected else exc  # nbformat's message may quote the file
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{where}: nbformat 3 that nbformat cannot convert to 4 ({why}); read it with read_file") from None
    upgraded["nbformat_minor"] = 4
    for cell in upgraded["cells"]:
        cell.pop("id", None)
    return _plain(upgraded)


def back(nb: dict[str, Any], style: Style, original: dict[str, Any], where: object) -> dict[str, Any]:
    """``nb`` (nbformat 4) in the version the file had, by nbformat's own conversion."""
    if style.version[0] == 4:
        return nb
    import nbformat
    from nbformat.v3.rwbase import split_lines

    worksheets = original["worksheets"]
    if len(worksheets) > 1:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{where}: nbformat 3 with {len(worksheets)} worksheets is read, not edited: nbformat 4 has one list of cells, "
            "and writing it back would merge them; nothing was written",
        )
    old = nbformat.convert(nbformat.from_dict(nb), 3)
    # What version 4 has no place for (the notebook's name, a worksheet's metadata) is the
    # file's own, never edited here.
    old["metadata"] = original.get("metadata", old["metadata"])
    if worksheets and old["worksheets"]:
        old["worksheets"][0]["metadata"] = worksheets[0].get("metadata", {})
    old.pop("orig_nbformat", None)
    old.pop("orig_nbformat_minor", None)
    old["nbformat_minor"] = style.version[1]
    return _plain(split_lines(old))


def _plain(node: Any) -> Any:
    """nbformat's NotebookNode as the plain dicts and lists json writes."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def dump(nb: dict[str, Any], style: Style) -> bytes:
    text = json.dumps(nb, indent=style.indent, sort_keys=style.sort_keys, ensure_ascii=style.ensure_ascii)
    return (text + ("\n" if style.final_newline else "")).encode("utf-8")


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def stored(text: str, style: Style) -> str | list[str]:
    return text.splitlines(keepends=True) if style.lists else text
