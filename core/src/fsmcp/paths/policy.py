"""The path policy: what a raw path argument resolves to, or why it is refused.

Built once by the host from the plugin manager's hooks and the roots, and handed to
:class:`fsmcp.paths.fs.FileSystem`, which asks it for every path a primitive is given and every link
met on the way. It knows nothing of the host: the file layer never calls back up into it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import consent
from ..api.errors import ErrorCode, ToolError
from .protected import ProtectedNames
from .roots import Access, ResolvedPath, Root, RootSet

if TYPE_CHECKING:
    from ..api.config import Settings

Hook = Callable[..., Any]


class NoPolicy(Exception):
    """No installed plugin provides the configured path policy: the server cannot start as configured."""


class PathPolicy:
    """The roots check, the configured ``fsmcp_resolve_path`` policy, the length check, the
    ``fsmcp_check_path`` vetoes (refused, or put to the user, by :func:`fsmcp.paths.consent.refuse`)
    and the protected names (``fsmcp_protected_globs``).

    ``resolve_hook``, ``check_hook`` and ``protected_globs`` are the plugin manager's callers of
    those three hooks, called with their keyword arguments.
    """

    def __init__(self, roots: RootSet, settings: Settings, *, resolve_hook: Hook, check_hook: Hook, protected_globs: Hook):
        self.roots = roots
        self.settings = settings
        self._resolve_hook = resolve_hook
        self._check_hook = check_hook
        self._protected_globs = protected_globs
        self._protected: dict[str, ProtectedNames] = {}

    def resolve(self, raw: str, access: Access, follow_links: bool = True) -> ResolvedPath:
        """The resolved path for ``raw``; refusals raise :class:`fsmcp.ToolError`."""
        # Before any policy answers, so that no policy (ours or a third party's) can skip it.
        self.roots.check_usable(require_workspace=self.settings.require_workspace)
        resolved = self.ask(raw, access, follow_links)
        check_length(resolved.path)
        named = self._named(raw, resolved)
        reasons = [r for r in self._check_hook(path=resolved, access=access, named=named, settings=self.settings) if r]
        if reasons:
            consent.refuse(raw, resolved, access, reasons)
        return resolved

    def ask(self, raw: str, access: Access, follow_links: bool) -> ResolvedPath:
        """The configured policy's answer alone (no vetoes); :class:`NoPolicy` when no plugin provides it."""
        resolved = self._resolve_hook(
            raw=raw, access=access, follow_links=follow_links, policy=self.settings.policy, roots=self.roots, settings=self.settings
        )
        if resolved is None:
            raise NoPolicy(f"no installed plugin provides the path policy {self.settings.policy!r}")
        return resolved

    def _named(self, raw: str, resolved: ResolvedPath) -> str:
        if raw == str(resolved.path) and raw.startswith("/") and "\\" not in raw and ".." not in raw:
            return raw  # the real path named as it is: what absolute and normpath would make of it
        try:
            return os.path.normpath(self.roots.absolute(raw))
        except ToolError:  # a policy that rewrote a path the default one would refuse
            return str(resolved.path)

    def protected(self, root: Root | Path | str) -> ProtectedNames:
        """What no tool may read or change under ``root`` (every ``fsmcp_protected_globs`` answer combined)."""
        key = str(root.path if isinstance(root, Root) else root)
        names = self._protected.get(key)
        if names is None:
            lists = self._protected_globs(root=key, settings=self.settings)
            names = self._protected[key] = ProtectedNames([g for globs in reversed(lists) for g in globs or ()])
        return names

    def is_protected(self, path: ResolvedPath | Path | str) -> bool:
        """Whether an absolute path inside the roots is protected."""
        # Relative to the operator's roots, as the globs were given (a client's MCP root may be
        # narrower): the innermost's names, matched from each root holding the path.
        real = Path(str(path.path if isinstance(path, ResolvedPath) else path))
        holders = [root for root in self.roots.holders(real) if root.path != real]
        if not holders:
            return False
        names = self.protected(holders[0])
        relative = [str(real.relative_to(root.path)) for root in holders] + [str(real)[1:]]  # and from /
        return any(names.matches(each) for each in relative)


# -- the path length limit ---------------------------------------------------------------

# The system's path length limit, held by every path a tool is given, whatever the policy.


def _path_max() -> int:
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096


PATH_MAX = _path_max()
"""Bytes of a path with its terminating NUL (4,096 on Linux)."""


def check_length(path: Path) -> None:
    """Refuse a path other programs could not name, though the descriptor walk could reach it.

    ``write_file`` walks one component at a time, so it could make a file whose path ripgrep,
    ``run_command`` or any other program is then refused with ENAMETOOLONG.
    """
    text = str(path)
    # UTF-8 takes at most 4 bytes a character (an undecodable byte held as a surrogate, 1): a
    # path this short is under the limit without being encoded, as nearly every path is.
    if len(text) * 4 < PATH_MAX:
        return
    size = len(os.fsencode(text))
    if size >= PATH_MAX:
        shown = text[:60] + "..." + text[-20:] if len(text) > 90 else text
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"the path {shown} is {size:,} bytes long, past the system's limit of {PATH_MAX - 1:,} (PATH_MAX); use a shorter path",
        )
