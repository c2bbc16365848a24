"""The allowed roots and the default path policy: is this path inside, and may it be written?"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from .errors import ErrorCode, ToolError


class Access(str, Enum):
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class Root:
    path: Path
    """The root's real path: symlinks resolved once, at start-up."""
    read_only: bool = False

    def describe(self) -> str:
        return f"{self.path} ({'read-only' if self.read_only else 'read-write'})"


@dataclass(frozen=True)
class ResolvedPath:
    """A path the policy admitted. Only the host makes these; tools hand them back to it.

    ``path`` is absolute with every directory component's symlinks resolved; the final
    component too unless the path was resolved to act on a link itself. It deliberately has
    no ``__fspath__``: a tool opens it through ``ctx.fs``, never by name.
    """

    path: Path
    root: Root
    access: Access
    follows_links: bool

    @property
    def is_root(self) -> bool:
        return self.path == self.root.path

    def __str__(self) -> str:
        return str(self.path)


_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:(?:[\\/]|$)|\\\\)")


class RootSet:
    """The operator's roots, the global read-only switch and the workspace for relative paths."""

    def __init__(self, roots: list[Root], *, read_only: bool = False, workspace: Path | None = None):
        if not roots:
            raise ValueError("at least one root is required")
        self.roots = roots
        self.read_only = read_only
        self.workspace = workspace or roots[0].path
        # Longest first, so a nested root (say /a/b:ro inside /a) decides for its own subtree.
        self._by_depth = sorted(roots, key=lambda r: len(r.path.parts), reverse=True)

    @classmethod
    def from_specs(cls, specs: list[str], *, read_only: bool = False, base: Path | None = None) -> tuple[RootSet, list[str]]:
        """Parse ``DIR`` / ``DIR:ro`` specs. Returns the set and a warning per unusable spec."""
        base = base or Path.cwd()
        roots: list[Root] = []
        warnings: list[str] = []
        for spec in specs or ["."]:
            raw, ro = spec, False
            if raw.endswith((":ro", ":rw")) and len(raw) > 3:
                raw, ro = raw[:-3], raw.endswith(":ro")
            path = Path(os.path.expanduser(raw))
            if not path.is_absolute():
                path = base / path
            real = Path(os.path.realpath(path))
            if not real.is_dir():
                warnings.append(f"root {spec!r} is not an existing directory; skipped")
                continue
            if any(r.path == real for r in roots):
                continue
            roots.append(Root(real, ro))
        if not roots:
            raise ValueError("no usable root directory: " + "; ".join(warnings))
        return cls(roots, read_only=read_only), warnings

    def containing(self, real: Path) -> Root | None:
        for root in self._by_depth:
            if real == root.path or real.is_relative_to(root.path):
                return root
        return None

    def writable(self, root: Root) -> bool:
        return not (self.read_only or root.read_only)

    def absolute(self, raw: str) -> str:
        """``raw`` as an absolute path string: ``~`` expanded, relative to the workspace."""
        if not isinstance(raw, str) or raw == "":
            raise ToolError(ErrorCode.INVALID_PARAMS, "the path is empty; give a file or directory path")
        if "\x00" in raw:
            raise ToolError(ErrorCode.ACCESS_DENIED, "the path contains a NUL byte, which no file name can hold")
        try:
            # Strict UTF-8 refuses lone surrogates, which JSON can carry but no file name holds.
            raw.encode("utf-8")
            os.fsencode(raw)
        except UnicodeEncodeError:
            raise ToolError(ErrorCode.ACCESS_DENIED, "the path holds characters this system cannot represent in a file name") from None
        if os.name == "posix" and _WINDOWS_PATH.match(raw):
            raise ToolError(ErrorCode.ACCESS_DENIED, f"{raw!r} is a Windows-style path; this server runs on a POSIX system, use /-separated paths")
        if raw.startswith("~"):
            raw = os.path.expanduser(raw)
        if not os.path.isabs(raw):
            raw = os.path.join(self.workspace, raw)
        return raw

    def confine(self, raw: str, access: Access, follow_links: bool = True) -> ResolvedPath:
        """The default policy: the real path must lie inside a root, component by component."""
        absolute = self.absolute(raw)
        real = self._realpath(absolute, follow_links)
        root = self.containing(real)
        if root is None:
            raise ToolError(
                ErrorCode.ACCESS_DENIED,
                f"{raw!r} is outside the allowed directories; use a path inside one of: "
                + ", ".join(str(r.path) for r in self.roots),
            )
        if access is Access.WRITE and not self.writable(root):
            why = "the server runs with --read-only" if self.read_only else f"{root.path} is a read-only root"
            raise ToolError(ErrorCode.READ_ONLY, f"cannot change {real}: {why}")
        return ResolvedPath(real, root, access, follow_links)

    @staticmethod
    def _realpath(absolute: str, follow_links: bool) -> Path:
        # realpath resolves `..` physically, after the symlink before it, as the kernel would;
        # a missing tail is kept as written, so a new file resolves through its deepest
        # existing ancestor.
        if follow_links:
            return Path(os.path.realpath(absolute))
        head, name = os.path.split(absolute.rstrip("/") or "/")
        if name in ("", ".", ".."):
            return Path(os.path.realpath(absolute))
        return Path(os.path.realpath(head)) / name
