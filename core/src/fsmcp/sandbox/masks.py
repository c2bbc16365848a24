"""The protected files a started program must not read: found by a walk of the roots at each
start, then hidden by the launcher's mounts (or, where this system allows no user namespace, left
out of the Landlock ruleset).

The walk lists what exists when the program starts, in its turn (:class:`fsmcp.paths.change.Order`: the server's
own changes wait while programs run); a protected file another process creates afterwards is not
hidden from that program (the next one started hides it).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..api.errors import ErrorCode, ToolError

MAX_ENTRIES = 500_000
"""Entries one walk may read before it gives up: past that a program is not started (the walk
would cost seconds at every start)."""
RACY_NS = 2_000_000_000
"""A directory changed this recently is read again at the next start: a change within the same
tick of its file system's clock would leave its time stamp as it was."""

LAUNCHER = str(Path(__file__).with_name("launch.py"))
"""The launcher every confined program starts through (and the probe of what it can do)."""


class Names(Protocol):
    def protects(self, relpath: str) -> bool: ...


@dataclass(frozen=True)
class _Dir:
    stamp: tuple[int, int, int, int]
    """Device, inode, modification and change times: any entry added, removed or renamed changes it."""
    found: tuple[str, ...]
    below: tuple[tuple[str, str], ...]
    """The directories to walk on: (path, path relative to the root, ``/``-terminated)."""


class Finder:
    """The protected paths beneath one root, for one set of names.

    A directory whose time stamps have not changed since the last walk is not read again (a
    stat instead of reading and matching every entry), so a walk of a large tree costs a stat
    per directory once the tree is known.
    """

    def __init__(self, root: str, names: Names, prefixes: tuple[str, ...] = ("",)):
        self.root = root
        self.names = names
        self.prefixes = prefixes
        """Where ``root`` lies below each operator root holding it (``""``, ``.aws/``): names are
        matched from there, as the tools match them, whatever root the program is given."""
        self._dirs: dict[str, _Dir] = {}
        self._lock = threading.Lock()

    def find(self, limit: int = MAX_ENTRIES) -> list[str]:
        with self._lock:
            return self._find(limit)

    def _find(self, limit: int) -> list[str]:
        now = time.time_ns()
        found: list[str] = []
        kept: dict[str, _Dir] = {}
        read = 0
        stack = [(self.root, "")]
        while stack:
            directory, rel = stack.pop()
            try:
                st = os.stat(directory, follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError:  # past PATH_MAX, say: what it holds is not known, so it is hidden whole
                found.append(directory + "/")
                continue
            stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            known = self._dirs.get(directory)
            if known is None or known.stamp != stamp:
                known, count = self._read(directory, rel, stamp)
                read += count
                if read > limit:
                    raise ToolError(
                        ErrorCode.PERMISSION_DENIED,
                        f"{self.root} holds more than {limit:,} entries, too many to look for protected files before a program starts; "
                        "the program was not started. Narrow the roots (or the client's roots) to the project's directory",
                    )
            if now - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
                kept[directory] = known
            found += known.found
            stack += known.below
        self._dirs = kept
        return found

    def _read(self, directory: str, rel: str, stamp: tuple[int, int, int, int]) -> tuple[_Dir, int]:
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except FileNotFoundError:
            return _Dir(stamp, (), ()), 0
        except OSError:
            # Unreadable to the server is not unreadable to its programs (one may own it and
            # chmod it back), nor past PATH_MAX to a program that walks by descriptor: what it
            # holds is not known, so it is hidden whole.
            return _Dir(stamp, (directory + "/",), ()), 0
        found: list[str] = []
        below: list[tuple[str, str]] = []
        for entry in entries:
            relpath = rel + entry.name
            try:
                folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                found.append(entry.path)  # not known: hidden (the launcher refuses a directory listed as a file)
                continue
            if any(self.names.protects(prefix + relpath) for prefix in self.prefixes):
                if not entry.is_symlink():  # a link leads to its target, listed where it lies if in a root
                    found.append(entry.path + "/" if folder else entry.path)
            elif folder:
                below.append((entry.path, relpath + "/"))
        return _Dir(stamp, tuple(found), tuple(below)), len(entries)


_finders: dict[tuple[str, int], Finder] = {}


def protected(roots: Iterable[tuple[str | os.PathLike[str], Names, tuple[str, ...]]], limit: int = MAX_ENTRIES) -> list[str]:
    """Every protected path beneath ``roots`` (each with its names and :attr:`Finder.prefixes`),
    absolute; a directory's ends with ``/`` (it is listed, not walked). Links are not followed."""
    found: list[str] = []
    for root, names, prefixes in roots:
        key = (os.fspath(root), id(names), prefixes)
        finder = _finders.get(key)
        if finder is None or finder.names is not names:
            finder = _finders[key] = Finder(os.fspath(root), names, prefixes)
        found += finder.find(limit)
    return list(dict.fromkeys(found))  # nested roots list theirs twice


@functools.cache
def can_mount() -> bool:
    """Whether the launcher can hide files here: a user namespace, and a tmpfs mounted in it
    (a kernel without them, ``user.max_user_namespaces = 0``, or a security module that refuses
    them, as Ubuntu's AppArmor does to unprivileged users by default, answer no)."""
    done = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--probe"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    return done.returncode == 0


def above(paths: Iterable[str], roots: Iterable[str]) -> list[str]:
    """The directories between each of ``paths`` and the innermost root holding it (the root
    left out: a program cannot rename it), outermost first, each once."""
    tops = sorted((r.rstrip("/") for r in roots), key=len, reverse=True)
    found: dict[str, None] = {}
    for path in paths:
        path = path.rstrip("/")
        top = next((t for t in tops if path.startswith(t + "/")), None)
        if top is None:
            continue
        chain = []
        parent = os.path.dirname(path)
        while len(parent) > len(top):
            chain.append(parent)
            parent = os.path.dirname(parent)
        found.update(dict.fromkeys(reversed(chain)))
    return sorted(found, key=lambda d: d.count("/"))


def listing(paths: Iterable[str]) -> int:
    """A descriptor (for the launcher, not inherited unless passed) reading ``paths`` NUL-separated from the start
    (the protected paths; a request's fields too, :func:`.launcher.launch`)."""
    fd = os.memfd_create("fsmcp-protected", os.MFD_CLOEXEC)
    data = b"\0".join(os.fsencode(p) for p in paths)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
