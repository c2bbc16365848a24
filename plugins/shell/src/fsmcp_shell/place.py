"""Where a command runs and what it may name: the program, the working directory, the paths in
its arguments, the environment. Everything here is decided before anything is spawned."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from fsmcp import Access, ErrorCode, ResolvedPath, ToolContext, ToolError

from .options import ShellOptions


def search_path(options: ShellOptions, ctx: ToolContext) -> str:
    """PATH for finding programs, and for the programs themselves.

    Relative entries (``.``, empty) would mean the working directory, and an entry inside an
    allowed root is a directory the model can write a program into: both are left out.
    """
    raw = operator_path(options)
    kept = [entry for entry in raw.split(os.pathsep) if entry and os.path.isabs(entry) and not _writable_by_clients(entry, ctx)]
    return os.pathsep.join(dict.fromkeys(kept))


def operator_path(options: ShellOptions) -> str:
    """PATH as the operator gives it (``path``, else the server's own)."""
    return options.path if options.path is not None else os.environ.get("PATH", os.defpath)


def not_installed(name: str, path: str) -> str | None:
    """Why ``name`` cannot be found on ``path`` (said on start-up and in refusals), or None."""
    if shutil.which(name, path=path) is None:
        return f"{name} is not installed (it is not on the server's PATH: {path or 'empty'})"
    return None


def locate(command: str, path: str, ctx: ToolContext) -> str:
    """The program's absolute path on ``path``; the child finds the same one through its PATH."""
    found = shutil.which(command, path=path)
    if found is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"{command} is allowed but not installed: it is not on the server's PATH ({path or 'empty'})")
    if _writable_by_clients(found, ctx):
        raise ToolError(ErrorCode.COMMAND_NOT_ALLOWED, f"{command} resolves to {found}, inside an allowed directory, where programs can be written; it is not run")
    return found


def _writable_by_clients(path: str, ctx: ToolContext) -> bool:
    # Every root the operator configured counts, not only this client's view of them: another
    # client (or this one, before it narrowed its roots) may have written there.
    real = Path(path).resolve()
    return any(real == root.path or real.is_relative_to(root.path) for root in ctx.roots.operator)


def environment(options: ShellOptions, path: str) -> dict[str, str]:
    """The child's whole environment: nothing of the server's but these, so no secret leaks
    and no variable (LD_PRELOAD, GREP_OPTIONS, RIPGREP_CONFIG_PATH, ...) changes what runs."""
    env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", "/"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    env.update(options.env)
    return env


def working_directory(raw: str | None, access: Access, ctx: ToolContext) -> ResolvedPath:
    where = ctx.fs.resolve(raw if raw is not None else str(ctx.roots.workspace), access)
    kind = ctx.fs.kind(where)
    if kind is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"working directory {where} does not exist; give an existing directory inside the roots")
    if kind != "directory":
        raise ToolError(ErrorCode.NOT_DIRECTORY, f"working directory {where} is not a directory")
    return where


def check_paths(values: Iterable[str], cwd: ResolvedPath, access: Access, ctx: ToolContext, command: str) -> None:
    """Resolve every string the program may open, as the program would (relative to ``cwd``),
    through the path policy: outside the roots, or refused by a veto, and nothing runs.

    There is no shell, so ``~`` is not expanded: ``~/x`` is a directory named ``~`` here, as
    it is for the program.
    """
    for value in dict.fromkeys(values):
        # Spelt out absolutely, so that no policy reads it another way (workspace-relative drops
        # a leading workspace/): the check is of exactly what the program will open.
        raw = value if value.startswith("/") else f"{cwd.path}/{value}"
        try:
            ctx.fs.resolve(raw, access)
            if access is Access.WRITE:
                # A program that may write a path may read it too: a file tools may change but not
                # read (protected, allow_write) is no program's argument.
                ctx.fs.resolve(raw, Access.READ)
        except ToolError as exc:
            raise ToolError(exc.code, f"argument {value!r} of {command} is refused: {exc.message}. Nothing was run", exc.details) from None


def why_read_only(cwd: ResolvedPath, ctx: ToolContext) -> str:
    return "the server runs with --read-only" if ctx.roots.read_only else f"{cwd.root.path} is a read-only root"
