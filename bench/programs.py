"""What confinement costs a started program: run_command with the sandbox on and off.

Two servers over stdio on the same small tree, one with ``--sandbox require`` (Landlock), one
with ``--sandbox off``, called in turns; the difference is the launcher (a ``python -I -S``
start) and the ruleset. Also the launcher alone against ``cat`` run directly.
Run: ``uv run python bench/programs.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import anyio.to_thread

from common import fsmcp_params, interleaved, print_table, ratio, session


def _call(client, tool: str, args: dict):
    async def once() -> None:
        result = await client.call_tool(tool, args)
        if result.is_error:
            sys.exit(f"bench: {tool} failed: {result.content[0].text[:500]}")

    return once


def _run(argv: list[str]):
    async def once() -> None:
        await anyio.to_thread.run_sync(lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, check=True))

    return once


def _launcher_alone(path: str) -> list[str]:
    """The launcher's own start, confining ``cat`` with an empty-handed ruleset of this kernel's ABI."""
    code = (
        "import os, subprocess, sys; from fsmcp import landlock, programs; "
        "r = landlock.Ruleset(landlock.abi()); r.grant_each(programs.SYSTEM_DIRS, landlock.RUN); r.grant(sys.argv[1], landlock.READ); fd = r.build(); "
        "subprocess.run([sys.executable, '-I', '-S', programs._LAUNCHER, str(fd), '/bin/cat', 'cat', sys.argv[1]], pass_fds=(fd,), stdout=subprocess.DEVNULL, check=True)"
    )
    return [sys.executable, "-c", code, path]


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.txt").write_text("hello\n" * 100)
        args = {"command": "cat", "args": ["a.txt"]}
        async with session(fsmcp_params(str(root), "--sandbox", "require")) as confined, session(fsmcp_params(str(root), "--sandbox", "off")) as plain:
            figures = await interleaved(
                {
                    "run_command cat a.txt": [_call(confined, "run_command", args), _call(plain, "run_command", args)],
                    "cat a.txt run directly, through the launcher vs not": [_run(_launcher_alone(str(root / "a.txt"))), _run([sys.executable, "-c", "import subprocess, sys; subprocess.run(['/bin/cat', sys.argv[1]], stdout=subprocess.DEVNULL, check=True)", str(root / "a.txt")])],
                },
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
