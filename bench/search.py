"""Search benchmark: grep_files, search_files and glob_search on a seeded 100,000-file tree.

grep_files runs through the real server and is compared with ripgrep run directly on the same
query; search_files and glob_search are compared with ``find`` and with the reference server's
``search_files``. Every figure is the median of several rounds after a warm-up round; the tree
(source-like text, some binaries, a ``.gitignore``) is built once under ``bench/.fixtures``.
Run: ``uv run python bench/search.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread

from fsmcp_search.ripgrep import binary

from common import BENCH, fsmcp_params, interleaved, median, print_table, ratio, reference_params, reference_version, session, timed

FILES = 100_000
SEED = 20261121
TREE = BENCH / ".fixtures" / "search"
DONE = BENCH / ".fixtures" / f"search.{SEED}.{FILES}.done"
WORDS = (
    "alpha beta gamma delta parse render cache index query token buffer stream socket frame packet "
    "config loader reader writer handler session client server router widget layout model view store"
).split()
RARE = "frobnicate_widget"


def _source(rng: random.Random) -> str:
    out = [f'"""{" ".join(rng.choices(WORDS, k=8))}."""', "", f"import {rng.choice(WORDS)}", ""]
    for _ in range(rng.randint(3, 8)):
        name = "_".join(rng.choices(WORDS, k=2))
        out += [
            "",
            f"def {name}_{rng.randint(0, 999)}(value, {rng.choice(WORDS)}=None):",
            f"    # {' '.join(rng.choices(WORDS, k=6))}",
            f"    result = {rng.choice(WORDS)}.{rng.choice(WORDS)}(value) + {rng.randint(0, 99)}",
            "    return result",
        ]
    if rng.random() < 0.0005:
        out.append(f"{RARE}(result)  # the rare call the benchmark looks for")
    return "\n".join(out) + "\n"


def build_tree() -> tuple[int, int]:
    """The tree, built once: 100,000 files in 2,000 directories, 10 % of them git-ignored, 1 % binary."""
    rng = random.Random(SEED)
    folders = [f"pkg{p:02}/{'build' if s == 9 else f'sub{s}'}/mod{m}" for p in range(20) for s in range(10) for m in range(10)]
    if not DONE.exists():
        print(f"bench: building {FILES:,} files under {TREE} (once) ...", file=sys.stderr)
        TREE.mkdir(parents=True, exist_ok=True)
        (TREE / ".gitignore").write_text("build/\n*.log\n")
        for folder in folders:
            (TREE / folder).mkdir(parents=True, exist_ok=True)
        for n in range(FILES - 1):
            folder = folders[n % len(folders)]
            roll = rng.random()
            if roll < 0.01:
                (TREE / folder / f"blob{n}.bin").write_bytes(rng.randbytes(2048) + b"\0" + RARE.encode())
            elif roll < 0.02:
                (TREE / folder / f"run{n}.log").write_text(f"{RARE} in a log\n" * 3)
            else:
                suffix = "_test.py" if roll < 0.12 else ".py"
                (TREE / folder / f"{'_'.join(rng.choices(WORDS, k=2))}_{n}{suffix}").write_text(_source(rng))
        DONE.write_text("complete\n")
    # A repository, as real projects are: direct ripgrep then honours the .gitignore as we do.
    (TREE / ".git").mkdir(exist_ok=True)
    (TREE / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    size = sum(p.stat().st_size for p in TREE.rglob("*") if p.is_file())
    return FILES, size


def _run(argv: list[str]) -> Callable[[], Awaitable[None]]:
    async def once() -> None:
        done = await anyio.to_thread.run_sync(lambda: subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        if done.returncode not in (0, 1):
            sys.exit(f"bench: {argv[0]} failed with status {done.returncode}")

    return once


def _call(client, tool: str, args: dict) -> Callable[[], Awaitable[None]]:
    async def once() -> None:
        result = await client.call_tool(tool, args)
        if result.is_error:
            sys.exit(f"bench: {tool} failed: {result.content[0].text[:500]}")

    return once


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


async def main(runs: int) -> None:
    files, size = build_tree()
    root = str(TREE)
    rg = binary()
    queries = {
        f"grep_files {RARE!r} (rare, whole walk)": (
            {"regex": RARE, "directory": root},
            [rg, "--no-config", "-n", "--hidden", "--glob", "!.git", RARE, root],
        ),
        r"grep_files 'def stream_socket_[1-4]\d\d\(' (some hundred matches)": (
            {"regex": r"def stream_socket_[1-4]\d\d\(", "directory": root},
            [rg, "--no-config", "-n", "--hidden", "--glob", "!.git", r"def stream_socket_[1-4]\d\d\(", root],
        ),
        r"grep_files 'def \w+_handler_\d+' (common, maxResults 500)": (
            {"regex": r"def \w+_handler_\d+", "directory": root},
            [rg, "--no-config", "-n", "--hidden", "--glob", "!.git", r"def \w+_handler_\d+", root],
        ),
    }
    names = {
        "search_files 'handler'": (
            "search_files",
            {"directory": root, "nameContains": "handler"},
            ["find", root, "-iname", "*handler*"],
            {"path": root, "pattern": "**/*handler*"},
        ),
        "glob_search '**/*_test.py'": (
            "glob_search",
            {"directory": root, "globs": ["**/*_test.py"], "max": 0},
            ["find", root, "-type", "f", "-name", "*_test.py"],
            {"path": root, "pattern": "**/*_test.py"},
        ),
    }

    async with session(fsmcp_params(root)) as ours, session(reference_params(root)) as reference:
        contenders = {what: [_call(ours, "grep_files", args), _run(argv), None] for what, (args, argv) in queries.items()}
        contenders |= {
            what: [_call(ours, tool, args), _run(argv), _call(reference, "search_files", ref_args)]
            for what, (tool, args, argv, ref_args) in names.items()
        }
        figures = await interleaved(contenders, runs)

    header = f"{files:,} files, {size / 1e6:,.0f} MB; servers over stdio; median of {runs} rounds after a warm-up round"
    rows = [(what, _ms(figures[what][0]), _ms(figures[what][1]), ratio(figures[what][0], figures[what][1])) for what in figures]
    version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n", 1)[0]
    print_table(f"search vs direct tools ({version} for grep, find for names): {header}", rows)
    rows = [(what, _ms(figures[what][0]), _ms(figures[what][2]), ratio(figures[what][0], figures[what][2])) for what in names]
    print_table(f"search vs the reference server {reference_version()} search_files, same rounds", rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed calls per benchmark (default 7)")
    anyio.run(main, parser.parse_args().runs)
