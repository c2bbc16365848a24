"""Edit benchmark: edit_file and patch_apply on a 5 MB file, beside the reference server's edit_file.

Both servers run over stdio and edit the same seeded file. Every timed call makes a real
change; calls alternate between a change and its undo, so each run starts from the same
text. Run: ``uv run python bench/edit.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import anyio

from common import BENCH, fsmcp_params, median, print_table, ratio, reference_params, reference_version, session, timed

SIZE = 5 * 1024 * 1024
HUNKS = 200
MANY = 20
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split()


def build_file(path: Path) -> list[str]:
    """A seeded ~5 MB text file of unique numbered lines; returns its lines."""
    rng = random.Random(20261121)
    lines, size = [], 0
    while size < SIZE:
        line = f"{len(lines):07d} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        lines.append(line)
        size += len(line) + 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return lines


def spread(lines: list[str], n: int) -> list[int]:
    return [int((k + 0.5) * len(lines) / n) for k in range(n)]


def edits(lines: list[str], at: list[int], forward: bool) -> list[dict[str, str]]:
    pairs = [(lines[i], lines[i] + " EDITED") for i in at]
    return [{"oldText": a, "newText": b} if forward else {"oldText": b, "newText": a} for a, b in pairs]


def patch(lines: list[str], name: str, forward: bool) -> str:
    """A unified diff changing ``HUNKS`` lines spread over the file, 3 lines of context each."""
    out = [f"--- a/{name}", f"+++ b/{name}"]
    for i in spread(lines, HUNKS):
        before, after = lines[i], lines[i] + " EDITED"
        if not forward:
            before, after = after, before
        out.append(f"@@ -{i - 2},7 +{i - 2},7 @@")
        out += [" " + line for line in lines[i - 3 : i]] + ["-" + before, "+" + after]
        out += [" " + line for line in lines[i + 1 : i + 4]]
    return "\n".join(out) + "\n"


async def alternate(client, tool: str, forward: dict, backward: dict, runs: int) -> list[float]:
    """Timings of ``runs`` calls, alternating a change and its undo; the file ends as it began."""
    state = {"forward": True}

    async def once():
        result = await client.call_tool(tool, forward if state["forward"] else backward)
        if result.is_error:
            sys.exit(f"bench: {tool} failed: {result.content[0].text[:500]}")
        state["forward"] = not state["forward"]

    samples = await timed(once, runs)
    if not state["forward"]:
        await once()
    return samples


async def main(runs: int) -> None:
    directory = BENCH / ".fixtures" / "edit"
    path = directory / "big.txt"
    lines = build_file(path)
    one, many = spread(lines, 1), spread(lines, MANY)
    hunks = spread(lines, HUNKS)

    def edit_args(at: list[int], forward: bool) -> dict:
        return {"path": str(path), "edits": edits(lines, at, forward)}

    results: dict[str, dict[str, float]] = {"fsmcp": {}, "reference": {}}
    for server, params in (("fsmcp", fsmcp_params(str(directory))), ("reference", reference_params(str(directory)))):
        async with session(params) as client:
            for label, at in (("1 edit", one), (f"{MANY} edits", many), (f"{HUNKS} edits", hunks)):
                samples = await alternate(client, "edit_file", edit_args(at, True), edit_args(at, False), runs)
                results[server][f"edit_file, {label}"] = median(samples)
            tools = {t.name for t in (await client.list_tools()).tools}
            if server == "fsmcp" and "patch_apply" in tools:
                name = path.name
                forward = {"patch": patch(lines, name, True), "path": str(directory)}
                backward = {"patch": patch(lines, name, False), "path": str(directory)}
                samples = await alternate(client, "patch_apply", forward, backward, runs)
                results[server][f"patch_apply, {HUNKS} hunks"] = median(samples)

    rows = []
    for what in ("edit_file, 1 edit", f"edit_file, {MANY} edits", f"edit_file, {HUNKS} edits"):
        ours, theirs = results["fsmcp"][what], results["reference"][what]
        rows.append((what, f"{ours * 1000:.1f} ms", f"{theirs * 1000:.1f} ms", ratio(ours, theirs)))
    patch_key = f"patch_apply, {HUNKS} hunks"
    baseline = results["reference"][f"edit_file, {HUNKS} edits"]
    if patch_key in results["fsmcp"]:
        ours = results["fsmcp"][patch_key]
        rows.append((f"{patch_key} (vs ref. edit_file, {HUNKS} edits)", f"{ours * 1000:.1f} ms", f"{baseline * 1000:.1f} ms", ratio(ours, baseline)))
    else:
        rows.append((patch_key, "n/a", f"{baseline * 1000:.1f} ms", "n/a"))
    size = path.stat().st_size
    print_table(
        f"edit: {size / 1e6:.1f} MB file, {len(lines):,} lines; median of {runs} runs over stdio; "
        f"baseline = reference server {reference_version()}",
        rows,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="timed calls per benchmark (default 6)")
    anyio.run(main, parser.parse_args().runs)
