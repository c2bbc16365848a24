"""The host's shape, from its code: modules and lines per sub-package, the import graph, and the
modules one warm ``read_file`` and one warm ``edit_file`` pass through.

Run from a checkout (``uv run python bench/shape.py``): it reads the ``fsmcp`` package that
interpreter imports, so the same command in another checkout measures that one.

- **Lines**: per package under ``core/src/fsmcp`` (a directory with an ``__init__.py``), its
  modules and their non-blank lines (and all lines, blank ones too).
- **Imports** (``ast``: ``import fsmcp.x``, ``from fsmcp.x import y``, ``from . import x``,
  ``from ..x import y``): arrows between fsmcp modules, imports under ``if TYPE_CHECKING:``
  apart; cycles (strongly connected components of more than one module); floors (the longest
  chain of arrows, a cycle counted as one module); arrows between sub-packages and those that go
  against ``ORDER``.
- **Trace**: each tool called once to warm up, then once through ``host.runner.call`` in process
  (``fsmcp.testing.host_for`` with the installed plugins) under ``sys.setprofile`` and
  ``threading.setprofile`` (set before the host starts, so its worker threads have it; counting
  only during the traced call). Every Python function entered counts by its module: host
  modules (``fsmcp.*``) and plugin modules (``fsmcp_*``) apart. A hop is two consecutive calls
  in different modules (in the order they happen, across threads); a crossing is a hop between
  host and plugin.
"""

from __future__ import annotations

import ast
import asyncio
import os
import sys
import tempfile
import threading
from collections import Counter, defaultdict
from importlib import metadata
from pathlib import Path

ORDER = [
    # Sub-packages from the bottom up: a module may import from its own sub-package and from
    # those listed before it; an arrow to one listed after it goes against the order. Edit as
    # the host's packages change; a sub-package missing here is reported as such.
    "fsmcp.api",
    "fsmcp.paths",
    "fsmcp.sandbox",
    "fsmcp.builtin",
    "fsmcp.run",
    "fsmcp.serve",
    "fsmcp.cli",
    "fsmcp",
]


# -- lines ---------------------------------------------------------------------------------


def modules(top: Path) -> dict[str, Path]:
    """Every module of the package at ``top`` and of its sub-packages, by dotted name."""
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        if not (here / "__init__.py").exists():
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        package = ".".join(("fsmcp", *here.relative_to(top).parts))
        for name in sorted(filenames):
            if name.endswith(".py"):
                found[package if name == "__init__.py" else f"{package}.{name[:-3]}"] = here / name
    return found


def package_of(module: str, packages: set[str]) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to the package itself)."""
    return module if module in packages else module.rpartition(".")[0]


def nonblank(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


# -- imports -------------------------------------------------------------------------------


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(module: str, path: Path, known: set[str], packages: set[str]) -> tuple[set[str], set[str]]:
    """The fsmcp modules ``module`` imports: (at run time, under TYPE_CHECKING only)."""
    tree = ast.parse(path.read_text())
    package = module if module in packages else module.rpartition(".")[0]
    runtime: set[str] = set()
    typing: set[str] = set()

    def target(name: str) -> str | None:
        # The module itself, else the deepest package that holds it (``from fsmcp import X``, X a name).
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST, only_typing: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test):
                for stmt in child.body:
                    visit_stmt(stmt, True)
                for stmt in child.orelse:
                    visit_stmt(stmt, only_typing)
            else:
                visit_stmt(child, only_typing)

    def visit_stmt(stmt: ast.AST, only_typing: bool) -> None:
        names: list[str] = []
        if isinstance(stmt, ast.Import):
            names = [alias.name for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                base = package.split(".")
                base = base[: len(base) - (stmt.level - 1)]
                source = ".".join(base + ([stmt.module] if stmt.module else []))
            else:
                source = stmt.module or ""
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in stmt.names]
        else:
            visit(stmt, only_typing)
            return
        for name in names:
            if name == "fsmcp" or name.startswith("fsmcp."):
                found = target(name)
                if found and found != module:
                    (typing if only_typing else runtime).add(found)

    visit(tree, False)
    return runtime, typing - runtime


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def floors(graph: dict[str, set[str]], groups: list[list[str]]) -> int:
    """The longest chain of arrows, each cycle counted as one module: how many floors the host has."""
    group_of = {m: i for i, g in enumerate(groups) for m in g}
    down: dict[int, set[int]] = defaultdict(set)
    for a, targets in graph.items():
        for b in targets:
            if group_of[a] != group_of[b]:
                down[group_of[a]].add(group_of[b])
    height: dict[int, int] = {}

    def level(g: int) -> int:
        if g not in height:
            height[g] = 1 + max((level(d) for d in down[g]), default=0)
        return height[g]

    return max((level(g) for g in range(len(groups))), default=0)


def shape(top: Path) -> None:
    found = modules(top)
    packages = {m for m, p in found.items() if p.name == "__init__.py"}
    by_package: dict[str, list[str]] = defaultdict(list)
    for module in found:
        by_package[package_of(module, packages)].append(module)
    print(f"fsmcp at {top}")
    print(f"\n{'package':<24}{'modules':>8}{'lines':>8}{'with blank':>12}")
    total_modules = total_lines = total_all = 0
    for package in sorted(by_package):
        lines = sum(nonblank(found[m]) for m in by_package[package])
        every = sum(len(found[m].read_text().splitlines()) for m in by_package[package])
        total_modules += len(by_package[package])
        total_lines += lines
        total_all += every
        print(f"{package:<24}{len(by_package[package]):>8}{lines:>8}{every:>12}")
    print(f"{'total':<24}{total_modules:>8}{total_lines:>8}{total_all:>12}")

    known = set(found)
    graph: dict[str, set[str]] = {}
    typing: dict[str, set[str]] = {}
    for module, path in found.items():
        graph[module], typing[module] = imports(module, path, known, packages)
    arrows = sum(len(t) for t in graph.values())
    groups = components(graph)
    cycles = [g for g in groups if len(g) > 1]
    print(f"\nimports: {len(found)} modules, {arrows} arrows, {floors(graph, groups)} floors, {len(cycles)} cycles")
    for group in cycles:
        print(f"  cycle of {len(group)}: {' '.join(m.removeprefix('fsmcp.') for m in group)}")
    typed = sorted((a, b) for a, targets in typing.items() for b in targets)
    print(f"  TYPE_CHECKING only: {len(typed)} arrows" + (": " + ", ".join(f"{a.removeprefix('fsmcp.')} -> {b.removeprefix('fsmcp.')}" for a, b in typed) if typed else ""))

    between: Counter[tuple[str, str]] = Counter()
    for a, targets in graph.items():
        for b in targets:
            pa, pb = package_of(a, packages), package_of(b, packages)
            if pa != pb:
                between[(pa, pb)] += 1
    if len(by_package) > 1:
        print("\narrows between packages (importer -> imported: count)")
        rank = {p: i for i, p in enumerate(ORDER)}
        missing = sorted(set(by_package) - set(rank))
        for (pa, pb), count in sorted(between.items()):
            against = pa in rank and pb in rank and rank[pb] > rank[pa]
            print(f"  {pa} -> {pb}: {count}" + ("   AGAINST ORDER" if against else ""))
        upward = sum(c for (pa, pb), c in between.items() if pa in rank and pb in rank and rank[pb] > rank[pa])
        print(f"  against ORDER: {upward} arrows" + (f"; packages not in ORDER: {', '.join(missing)}" if missing else ""))
        for (pa, pb), _ in sorted(between.items()):
            if pa in rank and pb in rank and rank[pb] > rank[pa]:
                for a in sorted(by_package[pa]):
                    for b in sorted(graph[a]):
                        if package_of(b, packages) == pb:
                            print(f"    {a} -> {b}")


# -- trace ---------------------------------------------------------------------------------


class Tracer:
    """Modules entered while ``active``, in order, by every thread (``sys``/``threading.setprofile``)."""

    def __init__(self) -> None:
        self.active = False
        self.seen: list[str] = []

    def __call__(self, frame, event, arg):  # noqa: ANN001 (a profile function's signature)
        if self.active and event == "call":
            module = frame.f_globals.get("__name__", "")
            if module == "fsmcp" or module.startswith(("fsmcp.", "fsmcp_")):
                self.seen.append(module)


def trace() -> None:
    from fsmcp.testing import host_for

    tracer = Tracer()
    sys.setprofile(tracer)
    threading.setprofile(tracer)
    root = Path(tempfile.mkdtemp(prefix="fsmcp-shape-"))
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    (root / "e.txt").write_text("alpha\nbeta\ngamma\n")
    host = host_for([root], entry_points=True)
    loop = asyncio.new_event_loop()
    calls = [
        ("read_file", {"path": "a.txt"}, {"path": "a.txt"}),
        # warm with one edit, trace its inverse: each text is unique in the file when it runs
        ("edit_file", {"path": "e.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}, {"path": "e.txt", "edits": [{"oldText": "BETA", "newText": "beta"}]}),
    ]
    print(f"\n{'warm call':<12}{'host modules':>14}{'plugin modules':>16}{'hops':>7}{'host<->plugin':>15}{'enters fsmcp.host':>19}")
    lists = []
    for name, warm, traced in calls:
        result = loop.run_until_complete(host.runner.call(name, warm))
        assert not result.get("isError"), result
        tracer.seen.clear()
        tracer.active = True
        try:
            result = loop.run_until_complete(host.runner.call(name, traced))
        finally:
            tracer.active = False
        assert not result.get("isError"), result
        seen = list(tracer.seen)
        host_modules = sorted({m for m in seen if not m.startswith("fsmcp_")})
        plugin_modules = sorted({m for m in seen if m.startswith("fsmcp_")})
        pairs = [(a, b) for a, b in zip(seen, seen[1:]) if a != b]
        crossings = sum(1 for a, b in pairs if a.startswith("fsmcp_") != b.startswith("fsmcp_"))
        into_host = sum(1 for _, b in pairs if b == "fsmcp.run.host")
        print(f"{name:<12}{len(host_modules):>14}{len(plugin_modules):>16}{len(pairs):>7}{crossings:>15}{into_host:>19}")
        lists.append((name, host_modules, plugin_modules))
    sys.setprofile(None)
    threading.setprofile(None)
    for name, host_modules, plugin_modules in lists:
        print(f"  {name}: {' '.join(m.removeprefix('fsmcp.') for m in host_modules)} | {' '.join(plugin_modules)}")


def main() -> None:
    import fsmcp

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="fsmcp-shape-state-")  # the journal goes here, not to ~
    top = Path(fsmcp.__file__).resolve().parent
    dist = metadata.distribution("fsmcp")
    print(f"fsmcp {dist.version}, Python {sys.version.split()[0]}")
    shape(top)
    trace()


if __name__ == "__main__":
    main()
