"""The tool list kept between starts, so that a stdio start answers ``tools/list`` unimported.

Importing the plugins, pydantic and their models, and writing every tool's JSON schema, costs
a start several times what the interpreter itself costs. What they produce (the definitions,
the instructions, the start-up line) depends only on what is installed and how the server is
configured, so it is kept in a file named by a digest of exactly that: the interpreter and its
``sys.path``; every distribution installed there (its ``.dist-info`` name, which holds the
version, and when it was written); every ``.pth`` file and each source file under the
directories they add (an editable install changes without a new version); the settings; the
environment; the working directory; the roots as resolved; the kernel and its boot. Anything of these that
changes names another file, so a definition is never served stale. Only a start that met no
problem is kept (no plugin failed or warned, no tool withheld), so a hit has nothing to warn about.

The files live under ``$XDG_CACHE_HOME/fsmcp/tools`` (else ``~/.cache/fsmcp/tools``) and are
neither read nor written when that directory is inside a root.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..api import __version__

if TYPE_CHECKING:
    from ..api.config import Settings
    from ..paths.roots import RootSet
    from .host import Host
    from .runner import CallRunner

log = logging.getLogger("fsmcp")

KEEP = 32
"""Files kept at most: the oldest go when a new one is written."""
_SKIPPED_DIRS = {"__pycache__", ".git", "tests", "node_modules"}


def directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fsmcp" / "tools"


def location(settings: Settings, roots: RootSet) -> Path | None:
    """The file for this start, or None when the cache would sit inside a root."""
    where = Path(os.path.realpath(directory()))
    if any(where == r.path or r.path in where.parents for r in roots.operator):
        return None
    return where / f"{digest(settings, roots)}.json"


def digest(settings: Settings, roots: RootSet) -> str:
    h = hashlib.sha256()
    for part in _inputs(settings, roots):
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()[:40]


def _inputs(settings: Settings, roots: RootSet) -> Any:
    yield __version__
    yield sys.version
    yield sys.executable
    yield os.getcwd()
    yield repr(os.uname())
    yield _boot()
    yield json.dumps(dataclasses.asdict(settings), sort_keys=True, default=str)
    yield json.dumps(sorted(os.environ.items()))
    yield json.dumps([r.describe() for r in roots.operator])
    yield json.dumps(sys.path)
    for entry in sys.path:
        if not _standard(entry):
            yield from _installed(entry)


def _standard(entry: str) -> bool:
    # The interpreter's own library changes only with the interpreter, which sys.version names.
    return entry.startswith(sys.base_prefix) and "-packages" not in entry


def _boot() -> str:
    # What the kernel offers (Landlock, namespaces) can change only with a new boot.
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text()
    except OSError:
        return "-"


def _installed(entry: str) -> Any:
    """What a ``sys.path`` directory holds that decides which tools exist and how they read."""
    try:
        names = sorted(os.scandir(entry or "."), key=lambda e: e.name)
    except OSError:
        return
    for item in names:
        if item.name.endswith((".dist-info", ".egg-info")):
            yield f"{item.name} {_stamp(item.path)}"
        elif item.name.endswith(".pth"):
            try:
                text = Path(item.path).read_text(errors="surrogateescape")
            except OSError:
                continue
            yield f"{item.name} {text}"
            for line in text.splitlines():
                if line and not line.startswith(("#", "import ")) and os.path.isdir(line):
                    yield from _sources(line)


def _sources(top: str) -> Any:
    """Each file under an editable install's directory, with its size and modification time."""
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            path = os.path.join(folder, name)
            yield f"{path} {_stamp(path)}"


def _stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ino}"


def load(where: Path | None) -> dict[str, Any] | None:
    if where is None:
        return None
    try:
        entry = json.loads(where.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or not {"tools", "instructions", "line"} <= entry.keys():
        return None
    return entry


def store(where: Path | None, entry: dict[str, Any]) -> None:
    """Written whole or not at all; a cache that cannot be written only costs the next start time."""
    if where is None:
        return
    try:
        where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = where.with_name(f".{where.name}.{os.getpid()}")
        temporary.write_text(json.dumps(entry, separators=(",", ":")))
        os.replace(temporary, where)
        kept = sorted(where.parent.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def forget(where: Path | None) -> None:
    if where is not None:
        try:
            where.unlink(missing_ok=True)
        except OSError:
            pass


class DeferredHost:
    """A host whose plugins load at the first tool call, for a start this cache answers: until then
    it has what a client asks first (the instructions, the tool list) from the cache, and the roots."""

    def __init__(self, settings: Settings, roots: RootSet, entry: dict[str, Any], where: Path | None):
        self.settings = settings
        self.roots = roots
        self._entry = entry
        self._where = where
        self._host: Host | None = None

    def listing(self) -> list[dict[str, Any]]:
        return self._entry["tools"] if self._host is None else self._host.listing()

    def instructions(self) -> str:
        return self._entry["instructions"]

    def host(self) -> Host:
        """The host, its plugins loaded at the first call (synchronously: one load for every call waiting)."""
        if self._host is None:
            from .host import Host

            self._host = Host.start(self.settings, roots=self.roots)
            if [t["name"] for t in self._entry["tools"]] != list(self._host.tools):
                # Nothing the key covers changed, yet the tools did: serve the truth, keep nothing.
                log.warning("the installed plugins offer other tools than when this configuration last started; tools/list changed")
                forget(self._where)
            elif not self._host.clean():
                # It warned only now (a program a plugin needs went missing): the next start says it at once.
                forget(self._where)
        return self._host

    @property
    def runner(self) -> CallRunner:
        """The host's call runner: asked for by the first call, which loads the plugins."""
        return self.host().runner
