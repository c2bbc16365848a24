"""Outline benchmark: characters `outline` returns against `read_file` of the same large files.

One fsmcp server over stdio (budget raised so that read_file sends each file whole) outlines
and reads large modules of installed packages (pydantic, pydantic_core, typing_extensions,
mcp), this repository's longest doc, and a large TypeScript file of the reference server's
dependencies when it is installed (``bench/.ref``). The baseline is read_file; the ratio is
the share of its characters an outline costs. Run: ``uv run python bench/outline.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import anyio
from common import BENCH, REFERENCE_DIR, fsmcp_params, print_table, session
from fsmcp.testing import text_of


def module_file(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin)


def large_files() -> list[Path]:
    files = [
        module_file("pydantic.main"),
        module_file("pydantic.json_schema"),
        module_file("pydantic_core.core_schema"),
        module_file("typing_extensions"),
        module_file("mcp.server.lowlevel.server"),
        BENCH.parent / "docs" / "writing-plugins.md",
    ]
    typescript = REFERENCE_DIR / "node_modules" / "zod" / "src" / "v4" / "core" / "schemas.ts"
    return files + ([typescript] if typescript.is_file() else [])


async def main() -> None:
    files = large_files()
    roots = sorted({str(f.parent) for f in files})
    rows = []
    async with session(fsmcp_params("--budget", "10000000", "--enable", "read,outline", *roots)) as client:
        for path in files:
            outline = text_of(await client.call_tool("outline", {"path": str(path)}))
            whole = text_of(await client.call_tool("read_file", {"path": str(path)}))
            lines = whole.count("\n") + 1
            name = f"{path.parent.name}/{path.name} ({lines} lines)"
            rows.append((name, f"{len(outline):,}", f"{len(whole):,}", f"{len(outline) / len(whole):.1%}"))
    print_table("outline: characters returned, fsmcp = outline, baseline = read_file of the same file", rows)


if __name__ == "__main__":
    anyio.run(main)
