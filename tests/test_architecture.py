"""The rules that keep the host small and the plugins thin, checked on the source itself."""

import ast
import inspect
from pathlib import Path

import pytest

from fsmcp import hookspecs

REPO = Path(__file__).resolve().parent.parent
PLUGIN_SOURCES = sorted(
    p for p in [*REPO.glob("plugins/*/src/**/*.py"), *REPO.glob("plugin-template/src/**/*.py")]
)

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
