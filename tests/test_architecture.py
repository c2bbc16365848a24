"""The rules that keep the host small and the plugins thin, checked on the source itself."""

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

import fsmcp
from fsmcp.api import hookspecs

REPO = Path(__file__).resolve().parent.parent
PLUGIN_SOURCES = sorted(
    p for p in [*REPO.glob("plugins/*/src/**/*.py"), *REPO.glob("plugin-template/src/**/*.py")]
)
TEMPLATE_TESTS = sorted([*REPO.glob("plugin-template/tests/**/*.py")])

# Calls that touch the file system by name. A plugin goes through ctx.fs instead, so that the
# path policy runs for every access and confinement can be tightened in one place.
OS_CALLS = {"open", "stat", "lstat", "listdir", "scandir", "walk", "remove", "unlink", "rename", "replace",
            "mkdir", "makedirs", "rmdir", "removedirs", "symlink", "link", "readlink", "chmod", "chown",
            "truncate", "utime", "access"}
SHUTIL_CALLS = {"copy", "copy2", "copyfile", "copytree", "move", "rmtree", "copymode", "copystat"}
# Ways to start a program. A plugin calls fsmcp.start_program, which confines it to the roots.
PROCESS_CALLS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "anyio": {"open_process", "run_process"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
           "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe"},
}
PATH_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob", "exists",
                "is_file", "is_dir", "is_symlink", "unlink", "touch", "mkdir", "rmdir", "rename",
                "symlink_to", "hardlink_to", "chmod", "lstat", "owner", "readlink", "samefile"}


def offending_calls(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append(f"line {node.lineno}: open()")
        elif isinstance(func, ast.Attribute):
            receiver = ast.unparse(func.value)
            if receiver in ("os", "os.path") and func.attr in OS_CALLS | {"exists", "isfile", "isdir", "islink", "getsize", "realpath"}:
                found.append(f"line {node.lineno}: {receiver}.{func.attr}()")
            elif func.attr in PROCESS_CALLS.get(receiver, ()):
                found.append(f"line {node.lineno}: {receiver}.{func.attr}() (start programs with fsmcp.start_program)")
            elif receiver == "shutil" and func.attr in SHUTIL_CALLS:
                found.append(f"line {node.lineno}: shutil.{func.attr}()")
            elif func.attr in PATH_METHODS and not (receiver.startswith(("ctx.fs", "fs", "self.fs")) or receiver.endswith(".fs")):
                found.append(f"line {node.lineno}: {receiver}.{func.attr}()")
    return found


@pytest.mark.parametrize("source", PLUGIN_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_plugins_never_touch_paths_by_name_nor_start_programs_themselves(source):
    assert offending_calls(source.read_text()) == []


def test_the_checker_catches_what_it_should():
    bad = "import os, shutil\nopen('x')\nos.stat('x')\nshutil.rmtree('x')\nPath('x').read_text()\nctx.fs.stat('x')\n"
    bad += "subprocess.run(['x'])\nanyio.open_process(['x'])\nos.execv('x', ['x'])\nstart_program(ctx, ['x'], cwd='.', env={})\n"
    assert len(offending_calls(bad)) == 7


def test_plugin_hook_modules_hold_only_hook_implementations():
    for hooks_py in [*REPO.glob("plugins/*/src/*/hooks.py"), *REPO.glob("plugin-template/src/*/hooks.py")]:
        tree = ast.parse(hooks_py.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                assert node.name.startswith("fsmcp_"), f"{hooks_py}: {node.name} is not a hook"
                assert any(ast.unparse(d) == "hookimpl" for d in node.decorator_list), f"{hooks_py}: {node.name}"


def test_every_hook_spec_is_documented():
    docs = (REPO / "docs" / "hooks.md").read_text()
    for name, spec in inspect.getmembers(hookspecs, inspect.isfunction):
        if name.startswith("fsmcp_"):
            assert spec.__doc__, f"{name} has no docstring"
            assert f"{name}(" in docs, f"docs/hooks.md has no section for {name}"


# -- the plugin API: what a plugin may import and reach ------------------------------------------


def documented_surface() -> dict[str, set[str]]:
    """The members docs/writing-plugins.md documents, by receiver: ``ctx``, ``ctx.fs``,
    ``ctx.roots``, ``ctx.journal`` and a journal entry. What a plugin may use is what is written there."""
    surface: dict[str, set[str]] = {"ctx": set(), "ctx.fs": set(), "ctx.roots": set(), "ctx.journal": set()}
    section = ""
    for line in (REPO / "docs" / "writing-plugins.md").read_text().splitlines():
        if line.startswith("#"):
            section = line
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        if section.startswith("## 5. `ToolContext`") or section.startswith("### The roots") or section.startswith("### The journal"):
            for receiver, name in re.findall(r"(ctx(?:\.roots|\.journal)?)\.([a-z_]+)", cell):
                surface[receiver].add(name)
        elif section.startswith("### The file system"):
            surface["ctx.fs"].add(re.match(r"\| `([a-z_]+)", line).group(1))
    return surface


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything but names and attributes."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    names.append(node.id)
    return names[::-1]


def api_breaches(source: str, *, tests: bool = False) -> list[str]:
    """Imports of anything but ``fsmcp``'s public names (``fsmcp.testing`` too in tests), and
    members of the call's context or file system that docs/writing-plugins.md does not document."""
    surface = documented_surface()
    public = set(fsmcp.__all__)
    allowed = {"fsmcp.testing"} if tests else set()
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fsmcp.") and alias.name not in allowed:
                    found.append(f"line {node.lineno}: import {alias.name} (import from fsmcp itself)")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module.startswith("fsmcp.") and node.module not in allowed:
                found.append(f"line {node.lineno}: from {node.module} import ... (import from fsmcp itself)")
            elif node.module == "fsmcp":
                for alias in node.names:
                    if alias.name not in public:
                        found.append(f"line {node.lineno}: from fsmcp import {alias.name} (not in fsmcp.__all__)")
    # The outermost chain of each attribute access: ctx.fs.roots.workspace, not also ctx.fs.roots.
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        chain = _chain(node)
        if chain is None:
            continue
        if chain[0] == "fsmcp" and chain[1] not in public:
            found.append(f"line {node.lineno}: {'.'.join(chain)} (fsmcp.{chain[1]} is not in fsmcp.__all__)")
            continue
        # ctx, self.ctx, run.ctx: the call's context; fs, self.fs: a file system a helper was handed.
        for i, name in enumerate(chain):
            rest = chain[i + 1 :]
            if name == "ctx" and rest:
                where = "ctx"
                if rest[0] in ("fs", "roots", "journal") and len(rest) > 1:
                    where, rest = f"ctx.{rest[0]}", rest[1:]
            elif name == "fs" and rest and (i > 0 or chain[0] == "fs") and not (i > 0 and chain[i - 1] == "ctx"):
                where = "ctx.fs"
            else:
                continue
            # The host's insides, documented once as if they were the API: named here, so they stay out.
            if rest[0] not in surface[where] or (where == "ctx.fs" and rest[0] in ("roots", "guard")):
                found.append(f"line {node.lineno}: {'.'.join(chain)} ({where}.{rest[0]} is not the documented plugin API)")
            break
    return found


@pytest.mark.parametrize("source", PLUGIN_SOURCES + TEMPLATE_TESTS, ids=lambda p: str(p.relative_to(REPO)))
def test_plugins_use_only_the_documented_plugin_api(source):
    assert api_breaches(source.read_text(), tests=source in TEMPLATE_TESTS) == []


def test_the_api_checker_catches_what_it_should():
    bad = """
import fsmcp.paths.fs
from fsmcp.api.config import Settings
from fsmcp import invalid, ToolError
if TYPE_CHECKING:
    from fsmcp.builtin.journal import Journal
ctx.fs.roots.workspace
ctx.fs.guard.hold(p)
self.ctx.fs.roots.set_workspace(raw)
self.fs.confinement
fs.roots.operator
ctx.change.settle()
ctx.journal.changes_as_dicts()
ctx.roots.set_workspace(raw)
ctx.fs.resolve(raw)
ctx.budget
fsmcp.current.QUICK_BYTES
fsmcp.truncate(text, 10, "")
"""
    found = api_breaches(bad)
    assert len(found) == 13, found
    assert api_breaches("from fsmcp.testing import connect\n", tests=True) == []
    assert len(api_breaches("from fsmcp.testing import connect\n")) == 1


# What ToolContext carries for the host that runs the call (the change it announces paths to,
# the cancellation it marks, the bytes a quick call read): no tool has a use for it.
HOST_SIDE = {"change", "running", "done", "cancel", "loop_bytes", "ordered"}


def _public_members(cls: type) -> set[str]:
    """A class's public methods and properties, and the public attributes its ``__init__`` sets."""
    names = {n for n in dir(cls) if not n.startswith("_")}
    init = ast.parse(inspect.getsource(cls))
    for node in ast.walk(init):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and ast.unparse(node.value) == "self":
            if not node.attr.startswith("_"):
                names.add(node.attr)
    return names


def test_the_documented_plugin_api_is_the_context_no_more_no_less():
    surface = documented_surface()
    assert _public_members(fsmcp.ToolContext) - HOST_SIDE == surface["ctx"]
    assert _public_members(fsmcp.RootsView) == surface["ctx.roots"]
    assert _public_members(fsmcp.JournalView) == surface["ctx.journal"]
    # Every primitive documented is one the file system has (it has more, for the host).
    assert surface["ctx.fs"] <= _public_members(fsmcp.FileSystem)
    docs = (REPO / "docs" / "writing-plugins.md").read_text()
    for record in (fsmcp.JournalEntry, fsmcp.JournalRecord):
        fields = [f.name for f in dataclasses.fields(record)]
        assert f"`{record.__name__}({', '.join(fields)})`" in docs
        for extra in _public_members(record) - set(fields):
            assert f"`{extra}`" in docs, f"{record.__name__}.{extra} is not in docs/writing-plugins.md"


# The host's sub-packages from the bottom up (docs/architecture.md): a module imports from its own
# sub-package and those below it, never from one above, so each can be read without the ones on
# top. Imports under TYPE_CHECKING are for annotations only and do not count.
HOST_LAYERS = ["api", "paths", "sandbox", "builtin", "run", "serve", "cli"]
HOST = REPO / "core/src/fsmcp"


def _runtime_imports(path: Path, host: Path) -> list[str]:
    """The fsmcp modules a host module imports at run time, as dotted names under ``fsmcp``."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    here = list(path.relative_to(host).with_suffix("").parts)
    package = here if here[-1] == "__init__" else here[:-1]
    package = [p for p in package if p != "__init__"]
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            target = ".".join([*base, *([node.module] if node.module else [])])
        elif node.module and node.module.startswith("fsmcp"):
            target = node.module.removeprefix("fsmcp").lstrip(".")
        else:
            continue
        found += [f"{target}.{a.name}".strip(".") if not node.module and node.level else target for a in node.names]
    return found


def _layer_breaches(files: list[Path], host: Path = HOST) -> list[str]:
    breaches = []
    for path in files:
        mine = path.relative_to(host).parts[0]
        if mine not in HOST_LAYERS:
            continue  # the facade (__init__, __main__) and fsmcp.testing sit on top of everything
        for target in _runtime_imports(path, host):
            theirs = target.split(".")[0]
            if not target or theirs not in HOST_LAYERS and theirs in {"__init__", ""}:
                breaches.append(f"{path.relative_to(host)} imports the facade fsmcp")
            elif theirs in HOST_LAYERS and HOST_LAYERS.index(theirs) > HOST_LAYERS.index(mine):
                breaches.append(f"{path.relative_to(host)} ({mine}) imports fsmcp.{target} ({theirs}, above it)")
    return breaches


def test_the_host_packages_import_only_downwards():
    files = sorted(HOST.rglob("*.py"))
    assert {p.relative_to(HOST).parts[0] for p in files if len(p.relative_to(HOST).parts) > 1} - {"__pycache__"} == set(HOST_LAYERS)
    assert _layer_breaches(files) == []


def test_the_layer_checker_catches_an_import_upwards(tmp_path):
    fake = tmp_path / "fsmcp"
    (fake / "paths").mkdir(parents=True)
    (fake / "paths" / "fs.py").write_text(
        "from typing import TYPE_CHECKING\nfrom ..api.errors import ToolError\nfrom ..run import host\n"
        "if TYPE_CHECKING:\n    from ..serve.stdio import Wire\n"
    )
    assert _layer_breaches([fake / "paths" / "fs.py"], fake) == ["paths/fs.py (paths) imports fsmcp.run (run, above it)"]
