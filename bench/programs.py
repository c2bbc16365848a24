"""What confinement costs a started program: run_command with the sandbox on and off.

Two servers over stdio on the same small tree, one with ``--sandbox require`` (Landlock), one
with ``--sandbox off``, called in turns; the difference is the launcher (a ``python -I -S``
start) and the ruleset.
Run: ``uv run python bench/programs.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import anyio

from common import fsmcp_params, interleaved, print_table, ratio, session


def _call(client, tool: str, args: dict):
    async def once() -> None:
        result = await client.call_tool(tool, args)
        if result.is_error:
            sys.exit(f"bench: {tool} failed: {result.content[0].text[:500]}")

    return once


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.txt").write_text("hello\n" * 100)
        args = {"command": "cat", "args": ["a.txt"]}
        async with session(fsmcp_params(str(root), "--sandbox", "require")) as confined, session(fsmcp_params(str(root), "--sandbox", "off")) as plain:
            figures = await interleaved(
                {"run_command cat a.txt": [_call(confined, "run_command", args), _call(plain, "run_command", args)]},
                runs,
            )
    rows = [(what, f"{on * 1000:,.1f} ms", f"{off * 1000:,.1f} ms", ratio(on, off)) for what, (on, off) in figures.items()]
    print_table(f"a started program, confined (Landlock) vs not: median of {runs} rounds after a warm-up round", rows)
    for what, (on, off) in figures.items():
        print(f"  {what}: the sandbox adds {(on - off) * 1000:,.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31, help="timed calls per benchmark (default 31)")
    anyio.run(main, parser.parse_args().runs)
