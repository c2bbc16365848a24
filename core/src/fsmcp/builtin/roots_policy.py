"""The default path policy, ``roots``: a path is usable when its real path lies inside a root."""

from __future__ import annotations

from ..api.hooks import hookimpl
from ..paths.roots import Access, ResolvedPath, RootSet

NAME = "roots"


@hookimpl
def fsmcp_resolve_path(raw: str, access: Access, follow_links: bool, policy: str, roots: RootSet) -> ResolvedPath | None:
    if policy != NAME:
        return None
    return roots.confine(raw, access, follow_links)
