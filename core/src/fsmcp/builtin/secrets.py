"""The ``secrets`` policy: files holding credentials stay out of every tool's reach, on by default.

It lists its globs through ``fsmcp_protected_globs`` (so searches, archives and started programs
leave the files out) and vetoes every path naming one through ``fsmcp_check_path``. The
operator shapes it under ``[plugins.secrets]`` in fsmcp.toml, globally and per root, or turns
it off with ``disable = ["secrets"]`` (docs/configuration.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..api.config import Settings, options_error
from ..paths.consent import Refusal
from ..api.hooks import hookimpl
from ..paths.protected import ProtectedNames
from ..paths.roots import Access, ResolvedPath, RootSet, shown

NAME = "secrets"

DEFAULT_GLOBS = (
    # Environment files hold API keys and database passwords; their templates hold none.
    ".env", ".env.*", "!.env.example", "!.env.sample", "!.env.template",
    # Private keys and key stores. A public key (.pub) is no secret and stays readable.
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    "!id_rsa*.pub", "!id_dsa*.pub", "!id_ecdsa*.pub", "!id_ed25519*.pub",
    ".gnupg",
    # Credentials of tools that log in: machines, package registries, git, databases, web servers.
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".htpasswd", ".vault-token",
    # Cloud and container credentials, wherever the home directory sits under the root.
    "**/.aws/credentials", "**/.docker/config.json", "**/.kube/config",
    "**/.config/gcloud/credentials.db", "**/.config/gcloud/access_tokens.db",
    "**/.config/gcloud/application_default_credentials.json", "**/.config/gcloud/legacy_credentials",
    # Password manager databases.
    "*.kdbx",
)


@dataclass(frozen=True)
class RootOptions:
    enabled: bool = True
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    allow_write: bool = False
    """Let tools create and change these files in place (write, edit, append). Reads stay refused,
    and so do moves, copies and deletions."""


@dataclass(frozen=True)
class Options(RootOptions):
    roots: dict[str, RootOptions] = field(default_factory=dict)
    """Per-root overrides, by the root's path; ``add`` and ``remove`` add to the global ones."""


def refusal(name: str, access: Access) -> Refusal:
    """The sentence every refusal carries (what the model reads, and what the operator can change);
    a read may be put to the user."""
    what = "read" if access is Access.READ else "changed"
    reason = (
        f"it is protected by the secrets policy and is not {what} by any tool; the operator can change that "
        "under [plugins.secrets] in fsmcp.toml (remove, allow_write, or per root)"
    )
    return Refusal(reason, ask=f"The agent wants to read {shown(name)}" if access is Access.READ else None)


class Secrets:
    """The policy for one server: its options, and a compiled matcher per root."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._options: Options | None = None
        self._roots: list[str] | None = None
        self._per_root: dict[str, tuple[ProtectedNames, RootOptions]] = {}

    @property
    def options(self) -> Options:
        if self._options is None:
            self._options = _parse(self._settings.options(NAME), self._operator_roots())
        return self._options

    def _operator_roots(self) -> list[str]:
        if self._roots is None:
            try:
                roots = RootSet.from_specs(self._settings.roots)[0].operator
            except ValueError:
                roots = []
            # Deepest first, so that a nested root decides for its own subtree.
            self._roots = sorted((str(r.path) for r in roots), key=len, reverse=True)
        return self._roots

    def for_root(self, root: str) -> tuple[ProtectedNames, RootOptions]:
        found = self._per_root.get(root)
        if found is None:
            opts = self.options
            merged = opts.roots.get(root) or RootOptions(opts.enabled, opts.add, opts.remove, opts.allow_write)
            globs = [g for g in DEFAULT_GLOBS if g not in merged.remove] + list(merged.add) if merged.enabled else []
            found = self._per_root[root] = (ProtectedNames(globs), merged)
        return found

    def _protected(self, path: str) -> RootOptions | None:
        # The innermost root holding the path decides which names are protected; they are matched
        # from each root holding it (``credentials`` in a root ``R/.aws`` is ``.aws/credentials`` in ``R``)
        # and from the file system's root.
        holders = [root for root in self._operator_roots() if path != root and path.startswith(root.rstrip("/") + "/")]
        if not holders:
            return None
        names, opts = self.for_root(holders[0])
        # From the file system's root too: a root that is itself ``X/.aws`` holds ``.aws/credentials``.
        relative = [path[len(root.rstrip("/")) + 1 :] for root in holders] + [path.lstrip("/")]
        return opts if any(names.matches(each) for each in relative) else None

    # -- the hooks ----------------------------------------------------------------------------

    @hookimpl
    def fsmcp_register_tools(self) -> None:
        # No tools: this is where a plugin's options are checked at start-up (exit 2 when wrong).
        self.options  # noqa: B018

    @hookimpl
    def fsmcp_protected_globs(self, root: str) -> list[str]:
        return list(self.for_root(root)[0].globs)

    @hookimpl
    def fsmcp_check_path(self, path: ResolvedPath, access: Access, named: str) -> str | None:
        for candidate in dict.fromkeys((str(path.path), named)):  # once when the name given is the real path
            opts = self._protected(candidate)
            if opts is None:
                continue
            if access is Access.WRITE and opts.allow_write and path.follows_links:
                continue  # changed in place; moving, copying or deleting it still needs the file's entry
            return refusal(candidate, access)
        return None


def _parse(raw: dict[str, Any], roots: list[str]) -> Options:
    section = dict(raw)
    per_root = section.pop("roots", {})
    if not isinstance(per_root, dict):
        raise options_error(NAME, 'roots must be a table of per-root tables, such as [plugins.secrets.roots."/srv/app"]')
    base = _checked(Options, section, "", {})
    parsed: dict[str, RootOptions] = {}
    for key, table in per_root.items():
        where = f'roots."{key}".'
        if not isinstance(table, dict):
            raise options_error(NAME, f"{where[:-1]} must be a table of options ({', '.join(f.name for f in fields(RootOptions))})")
        real = os.path.realpath(os.path.expanduser(key)) if key.startswith(("/", "~")) else None
        if real not in roots:
            raise options_error(NAME, f"{where[:-1]} names no root of this server; use a root's absolute path, one of: {', '.join(roots) or '(none)'}")
        inherited = {"enabled": base.enabled, "allow_write": base.allow_write, "add": base.add, "remove": base.remove}
        parsed[real] = _checked(RootOptions, table, where, inherited)
    return replace(base, roots=parsed)


def _checked(cls: type[RootOptions], table: dict[str, Any], where: str, inherited: dict[str, Any]) -> Any:
    """``table`` as ``cls``; a root's table keeps the global values it does not set, and adds to add/remove."""
    known = {f.name for f in fields(cls)} - {"roots"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise options_error(NAME, f"has unknown option(s) {', '.join(where + u for u in unknown)}; known: {', '.join(sorted(known))}")
    for name in ("enabled", "allow_write"):
        if name in table and not isinstance(table[name], bool):
            raise options_error(NAME, f"{where}{name} must be true or false, not {table[name]!r}")
    values = dict(inherited)
    values.update({k: v for k, v in table.items() if k in ("enabled", "allow_write")})
    for name in ("add", "remove"):
        value = table.get(name, [])
        if not isinstance(value, list) or not all(isinstance(g, str) and g.strip() for g in value):
            raise options_error(NAME, f"{where}{name} must be a list of globs, such as [\"*.secret\"]")
        values[name] = tuple(inherited.get(name, ())) + tuple(value)
    unknown_removals = [g for g in table.get("remove", ()) if g not in DEFAULT_GLOBS]
    if unknown_removals:
        raise options_error(
            NAME,
            f"{where}remove names {', '.join(map(repr, unknown_removals))}, which is no default glob; "
            f"remove takes defaults ({', '.join(DEFAULT_GLOBS)}); re-include a name with add = [\"!NAME\"]",
        )
    return cls(**values)
