"""The roots: the allowed directories and each client's view of them, the default path policy,
the walk that reaches a resolved path from its root's open descriptor, whether the roots lie on
local disks, and how a file name is written in output and read back from a client.
"""

from __future__ import annotations

import errno
import os
import re
import select
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote_to_bytes, urlsplit

from . import dirfd
from ..api.errors import ErrorCode, ToolError



# -- file names in output and from clients -------------------------------------------------

# How a file name is written in anything the server says (:func:`shown`), and read back when a
# client gives it (:func:`given`): one rule for every tool, so that a name copied from any output
# reaches the file, and a name can neither break a line of output nor reorder what is shown
# around it. The rule is docs/tools/README.md's table of escapes.


_BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_ESCAPED = {*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *_BIDI}
_NEEDS = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069\udc80-\udcff]|\\\\(?=[\\\\xu])")
_ESCAPE = re.compile(r"\\(?:\\|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4}))")


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    n = ord(c)
    if c == "\\":
        return "\\\\"
    if 0xDC80 <= n <= 0xDCFF:
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x80 else f"\\u{n:04x}"


def shown(name: str) -> str:
    """``name`` (or a whole path) as it is written in output: always valid UTF-8, one line."""
    return _NEEDS.sub(_escape, name)


def _unescape(match: re.Match[str]) -> str:
    byte, code = match.group(1), match.group(2)
    if byte is not None:
        n = int(byte, 16)
        if n >= 0x80:
            return chr(0xDC00 + n)  # the undecodable byte itself, as os.fsdecode holds it
        return chr(n) if n in _ESCAPED else match.group()
    if code is not None:
        n = int(code, 16)
        return chr(n) if n >= 0x80 and n in _ESCAPED else match.group()
    return "\\"


def given(raw: str) -> str:
    """A path as a client wrote it, with :func:`shown`'s escapes turned back into what they stand for."""
    return _ESCAPE.sub(_unescape, raw) if "\\" in raw else raw


def echoed(raw: str) -> str:
    """A path a client gave, quoted for a message: escapes as the client may have written them, once."""
    return f"'{shown(given(raw))}'"


# -- the roots -----------------------------------------------------------------------------


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
        return shown(str(self.path))


_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:(?:[\\/]|$)|\\\\)")


class View:
    """One client's view of the roots: the usable roots and the workspace relative paths use.

    The operator's roots, narrowed by the client's MCP roots when it offers some. ``chosen``
    says ``set_workspace`` picked the workspace; ``refusal`` is set when no path is usable
    (the client's roots and the operator's do not overlap) and says why.
    """

    def __init__(self, roots: list[Root], workspace: Path):
        self.roots = roots
        self.workspace = workspace
        self.chosen = False
        self.refusal: str | None = None


class _Viewing:
    # A class, not a generator: every call enters one.
    __slots__ = ("var", "view", "token")

    def __init__(self, var: ContextVar[View], view: View):
        self.var, self.view = var, view

    def __enter__(self) -> View:
        self.token = self.var.set(self.view)
        return self.view

    def __exit__(self, *exc: object) -> None:
        self.var.reset(self.token)


class RootSet:
    """The operator's roots, the global read-only switch, and the view each client has of them.

    ``operator`` is what the operator configured. ``roots`` and ``workspace`` are the current
    client's view: the server enters one :class:`View` per connection (:meth:`viewing`), so
    one client's MCP roots or ``set_workspace`` never reach another; outside any connection
    (a direct ``host.runner.call``, start-up) a default view over the operator's roots applies.
    """

    def __init__(self, roots: list[Root], *, read_only: bool = False, workspace: Path | None = None):
        if not roots:
            raise ValueError("at least one root is required")
        self.operator = list(roots)
        self.read_only = read_only
        # Where a path's real form can start from without reading the components above: each
        # root's path, when it was real at start-up (deepest first). What lies below a root is
        # reached from a descriptor opened then, so a later swap above it changes nothing.
        self._real_tops = [
            (top, top.rstrip("/") + "/")
            for top in sorted({str(r.path) for r in roots}, key=len, reverse=True)
            if os.path.realpath(top) == top
        ]
        self._workspace = workspace or roots[0].path
        self._view: ContextVar[View] = ContextVar("fsmcp_view", default=self.new_view())

    def new_view(self) -> View:
        """A fresh view: the operator's roots, the operator's workspace, nothing chosen."""
        return View(self.operator, self._workspace)

    def viewing(self, view: View) -> _Viewing:
        """Resolve paths through ``view`` inside this ``with`` block (and the threads it starts)."""
        return _Viewing(self._view, view)

    @property
    def view(self) -> View:
        return self._view.get()

    @property
    def roots(self) -> list[Root]:
        """The usable roots: the operator's, narrowed by the current client's MCP roots."""
        return self.view.roots

    @property
    def workspace(self) -> Path:
        """Where relative paths resolve: ``set_workspace``'s choice, else the first usable root."""
        return self.view.workspace

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
            # Under --read-only every root is one, so that each describes itself truly.
            roots.append(Root(real, ro or read_only))
        if not roots:
            raise ValueError("no usable root directory: " + "; ".join(warnings))
        return cls(roots, read_only=read_only), warnings

    def containing(self, real: Path) -> Root | None:
        return _containing(real, self.roots)

    def holders(self, real: Path) -> list[Root]:
        """The operator's roots holding ``real`` (or it), innermost first: a nested root decides
        which names it protects, and they are matched from each root that holds it."""
        held = [r for r in self.operator if real == r.path or real.is_relative_to(r.path)]
        return sorted(held, key=lambda r: len(r.path.parts), reverse=True)

    def operator_root(self, real: Path) -> Root | None:
        """The operator's root holding ``real`` (whatever a client's MCP roots narrowed it to)."""
        return _containing(real, self.operator)

    def writable(self, root: Root) -> bool:
        return not (self.read_only or root.read_only)

    def absolute(self, raw: str) -> str:
        """``raw`` as an absolute path string: ``~`` expanded, relative to the workspace."""
        if not isinstance(raw, str) or raw == "":
            raise ToolError(ErrorCode.INVALID_PARAMS, "the path is empty; give a file or directory path")
        if "\x00" in raw:
            raise ToolError(ErrorCode.ACCESS_DENIED, "the path contains a NUL byte, which no file name can hold")
        if os.name == "posix" and _WINDOWS_PATH.match(raw):
            raise ToolError(ErrorCode.ACCESS_DENIED, f"{echoed(raw)} is a Windows-style path; this server runs on a POSIX system, use /-separated paths")
        raw = given(raw)
        if not raw.isascii():
            try:
                # A lone surrogate other than an undecodable byte's (U+DC80-U+DCFF, as os.fsdecode
                # holds them) can come in JSON, but no file name holds it.
                os.fsencode(raw)
            except UnicodeEncodeError:
                raise ToolError(ErrorCode.ACCESS_DENIED, "the path holds characters this system cannot represent in a file name") from None
        if raw.startswith("~"):
            raw = os.path.expanduser(raw)
        if not os.path.isabs(raw):
            raw = os.path.join(self.workspace, raw)
        return raw

    def check_usable(self, *, require_workspace: bool = False) -> None:
        """Refuse every path when no root is usable, or a workspace is required and not chosen."""
        view = self.view
        if view.refusal:
            raise ToolError(ErrorCode.ACCESS_DENIED, view.refusal)
        if require_workspace and not view.chosen:
            raise ToolError(
                ErrorCode.ACCESS_DENIED,
                "no workspace is set (the server runs with --require-workspace): call set_workspace first "
                "with a directory inside " + ", ".join(str(r.path) for r in view.roots),
            )

    def confine(self, raw: str, access: Access, follow_links: bool = True) -> ResolvedPath:
        """The default policy: the real path must lie inside a usable root, component by component.

        Before any policy answers, the host has refused every path where no root is usable or a
        workspace is required and not chosen (:meth:`check_usable`)."""
        absolute = self.absolute(raw)
        text = self._real_text(absolute, follow_links)
        root = _containing(text, self.roots)
        if root is None:
            raise ToolError(
                ErrorCode.ACCESS_DENIED,
                f"{echoed(raw)} is outside the allowed directories; use a path inside one of: "
                + ", ".join(str(r.path) for r in self.roots),
            )
        if access is Access.WRITE and not self.writable(root):
            why = "the server runs with --read-only" if self.read_only else f"{root.path} is a read-only root"
            raise ToolError(ErrorCode.READ_ONLY, f"cannot change {shown(text)}: {why}")
        return ResolvedPath(Path(text), root, access, follow_links)

    def set_workspace(self, raw: str) -> Path:
        """Make ``raw`` (a directory inside the usable roots) the current client's workspace."""
        self.check_usable()
        real = self.confine(raw, Access.READ, True).path
        if not real.exists():
            raise ToolError(ErrorCode.NOT_FOUND, f"{echoed(raw)} does not exist; give an existing directory (create_directory makes one)")
        if not real.is_dir():
            raise ToolError(ErrorCode.NOT_DIRECTORY, f"{echoed(raw)} is not a directory; the workspace must be one (the file's parent, say)")
        self.view.workspace, self.view.chosen = real, True
        return real

    def narrow(self, view: View, uris: list[object]) -> list[str]:
        """Apply a client's MCP roots (``file://`` URIs) to ``view``. Returns why any was refused.

        The usable roots become the intersection of the client's roots with the operator's: a
        client root inside an operator root narrows it (keeping its read-only flag), an
        operator root inside a client root stays, and a client root never widens anything. A
        malformed root is refused alone. An empty list narrows nothing: the client named no roots.
        """
        paths: list[Path] = []
        problems: list[str] = []
        for uri in uris:
            try:
                paths.append(root_path(uri))
            except ValueError as exc:
                problems.append(f"client root {uri!r} refused: {exc}")
        roots = self._intersect(paths) if uris else self.operator
        view.roots = roots
        view.refusal = None if roots else self._no_overlap(uris, paths)
        if not (view.chosen and _containing(view.workspace, roots)):
            view.chosen = False
            view.workspace = roots[0].path if roots and roots is not self.operator else self._workspace
        return problems

    def _intersect(self, client: list[Path]) -> list[Root]:
        usable: dict[Path, Root] = {}
        for path in client:
            outer = _containing(path, self.operator)
            if outer is not None:
                usable.setdefault(path, Root(path, outer.read_only))
            for root in self.operator:
                if root.path.is_relative_to(path):
                    usable.setdefault(root.path, root)
        return list(usable.values())

    def _no_overlap(self, uris: list[object], paths: list[Path]) -> str:
        ours = ", ".join(str(r.path) for r in self.operator)
        if not paths:
            return (
                f"none of the client's MCP roots ({', '.join(map(repr, uris))}) is a usable file:// directory, so no "
                f"path is allowed; the client should offer roots inside the server's allowed directories: {ours}"
            )
        return (
            f"the client's MCP roots ({', '.join(map(str, paths))}) and the server's allowed directories ({ours}) "
            "do not overlap, so no path is allowed; open a folder inside the server's directories in the client, "
            "or start the server with a root that covers the client's"
        )

    def _real_text(self, absolute: str, follow_links: bool) -> str:
        # realpath resolves `..` physically, after the symlink before it, as the kernel would;
        # a missing tail is kept as written, so a new file resolves through its deepest
        # existing ancestor.
        if follow_links:
            return self._real(absolute)
        head, name = os.path.split(absolute.rstrip("/") or "/")
        if name in ("", ".", ".."):
            return self._real(absolute)
        return f"{self._real(head).rstrip('/')}/{name}"

    def _real(self, absolute: str) -> str:
        """``os.path.realpath(absolute)``, reading only the components below a root when no link or ``..`` is among them."""
        for top, prefix in self._real_tops:
            if absolute == top or absolute.startswith(prefix):
                names = [n for n in absolute[len(prefix):].split("/") if n and n != "."]
                if ".." in names:
                    break
                path = prefix.rstrip("/")
                for n in names:
                    path += "/" + n
                    try:
                        if stat.S_ISLNK(os.lstat(path).st_mode):
                            return os.path.realpath(absolute)
                    except OSError:
                        pass  # missing (or unreadable): kept as written, as realpath keeps it
                return path or "/"
        return os.path.realpath(absolute)


class RootsView:
    """What a tool may know of the roots, read-only (``ctx.roots``); the host's :class:`RootSet` stays its own.

    Each member answers for the current client's view, as :class:`RootSet` does.
    """

    __slots__ = ("_roots",)

    def __init__(self, roots: RootSet):
        self._roots = roots

    @property
    def operator(self) -> tuple[Root, ...]:
        """The roots the operator configured, whatever a client's MCP roots narrowed them to."""
        return tuple(self._roots.operator)

    @property
    def usable(self) -> tuple[Root, ...]:
        """The roots this client may use: the operator's, narrowed by its MCP roots."""
        return tuple(self._roots.roots)

    @property
    def workspace(self) -> Path:
        """Where relative paths resolve: ``set_workspace``'s choice, else the first usable root."""
        return self._roots.workspace

    @property
    def read_only(self) -> bool:
        """The server runs with ``--read-only``: no root is writable."""
        return self._roots.read_only

    @property
    def refusal(self) -> str | None:
        """Why no path is usable for this client (its MCP roots and the operator's do not overlap), or None."""
        return self._roots.view.refusal

    def writable(self, root: Root) -> bool:
        """Whether tools may change files under ``root`` (neither it nor the server is read-only)."""
        return self._roots.writable(root)

    def containing(self, real: Path) -> Root | None:
        """The usable root holding the real path ``real`` (the deepest), or None."""
        return self._roots.containing(real)

    def operator_root(self, real: Path) -> Root | None:
        """The operator's root holding the real path ``real`` (the deepest), or None."""
        return self._roots.operator_root(real)


def _containing(real: Path | str, roots: list[Root]) -> Root | None:
    # The deepest root holding it, so a nested root (say /a/b:ro inside /a) decides for its own
    # subtree: of the roots holding a path, the deepest has the longest text. Compared as
    # strings (both are absolute and normalised): pathlib's is_relative_to was a third of the
    # policy's time per call.
    text = str(real)
    found, longest = None, -1
    for root in roots:
        top = str(root.path)
        if len(top) > longest and (text == top or text.startswith(top if top.endswith("/") else top + "/")):
            found, longest = root, len(top)
    return found


def root_path(uri: object) -> Path:
    """The real directory a client's ``file://`` root names; ValueError says why it is unusable."""
    if not isinstance(uri, str):
        raise ValueError("a root's uri must be a string")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise ValueError("only file:// roots name directories")
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"the root is on another host ({parts.netloc}); only local directories are served")
    if parts.query or parts.fragment:
        raise ValueError("a file:// root has no query or fragment")
    # Bytes, not text: a directory's name need not be UTF-8, and its URI escapes it byte by byte.
    path = os.fsdecode(unquote_to_bytes(parts.path))
    if not path.startswith("/"):
        raise ValueError("the root is not an absolute path")
    if "\x00" in path:
        raise ValueError("the root's path holds a NUL byte")
    real = Path(os.path.realpath(path))
    if not real.is_dir():
        raise ValueError("the root is not an existing directory on the server")
    return real


# -- reaching a resolved path --------------------------------------------------------------

# Reaching a resolved path from its root's open descriptor, one real directory at a time, never
# asking the kernel to follow a link: between the policy's answer and the use, any directory on
# the way may be swapped for a symbolic link. A link met is read here and its target goes back
# through the path policy (docs/threat-model.md: a swap can make an operation fail or land
# elsewhere inside the roots, never outside them).


Resolver = Callable[[str, Access, bool], ResolvedPath]
Created = list[tuple[int, str]]
"""Directories made on the way: (a descriptor of the parent, name), newest last."""

MAX_HOPS = 40
"""Links followed for one path before giving up, as the kernel's own limit."""


class Place(NamedTuple):
    """Where a path's last component lives: an open parent directory and the name in it.

    ``name`` is ``"."`` when the path is a root itself (``fd`` is then the root's).
    ``path`` is what was reached: the path asked for, or where a link on the way led.
    """

    fd: int
    name: str
    path: ResolvedPath


class Confinement:
    """The roots' descriptors and the walk from them. Thread-safe: it holds no per-call state."""

    def __init__(self, roots: list[Root], resolver: Resolver, *, naive: bool = False):
        self._resolver = resolver
        # The race test's control: with the kernel following links in directories (the old
        # check-then-use by name) it must find an escape. Not reachable from configuration.
        self._dir_flags = dirfd.SEARCH & ~dirfd.NOFOLLOW if naive else dirfd.SEARCH
        anchors = []
        for root in sorted({r.path for r in roots}, key=lambda p: len(p.parts), reverse=True):
            try:
                fd = os.open(root, dirfd.SEARCH)
            except OSError:
                continue  # vanished since start-up: its paths find no anchor and are refused
            prefix = str(root).rstrip("/") + "/"
            anchors.append((str(root), prefix, fd))
        self._anchors = anchors
        self._fds = {fd for _, _, fd in anchors}
        weakref.finalize(self, _close_all, list(self._fds))

    def _anchor(self, p: ResolvedPath) -> tuple[str, list[str], int]:
        text = str(p.path)
        for root, prefix, fd in self._anchors:  # deepest first
            if text == root:
                return root, [], fd
            if text.startswith(prefix):
                parts = text[len(prefix):].split("/")
                if ".." in parts:
                    # A policy hands back real paths; ".." from the root's descriptor would climb out.
                    raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} is not a resolved path (it holds '..')")
                return root, parts, fd
        raise ToolError(ErrorCode.ACCESS_DENIED, f"{p} is outside the allowed directories")

    @contextmanager
    def at(self, p: ResolvedPath, created: Created | None = None) -> Iterator[Place]:
        """The open parent of ``p``'s last component; missing directories are made into ``created``."""
        place = self.reach(p, created)
        try:
            yield place
        finally:
            self.release(place.fd)

    def reach(self, p: ResolvedPath, created: Created | None = None) -> Place:
        """As :meth:`at`, for a caller that releases ``place.fd`` itself (a hot path)."""
        for _ in range(MAX_HOPS):
            root, parts, fd = self._anchor(p)
            try:
                for i, name in enumerate(parts[:-1]):
                    nxt = self._enter(fd, name, created)
                    if nxt is None:
                        target = dirfd.readlink(fd, name)
                        if target is not None:
                            p = self.redirect(p, os.path.join(root, *parts[:i]), target, parts[i + 1:])
                        break  # walk again: to where the link leads, or the same way if it is gone
                    self.release(fd)
                    fd = nxt
                else:
                    return Place(fd, parts[-1] if parts else ".", p)
            except BaseException:
                self.release(fd)
                raise
            self.release(fd)
        raise loop_error(p)

    def _enter(self, fd: int, name: str, created: Created | None) -> int | None:
        """The directory ``name`` below ``fd``, or None when it is a symbolic link."""
        while True:
            try:
                return os.open(name, self._dir_flags, dir_fd=fd)
            except FileNotFoundError:
                if created is None:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                    created.append((os.dup(fd), name))
                except FileExistsError:
                    pass  # made meanwhile: entered like any other
                created = None
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                mode = dirfd.lstat(fd, name).st_mode
                if stat.S_ISLNK(mode):
                    return None
                if not stat.S_ISDIR(mode):
                    raise
                # A link a moment ago, a directory again now: open it again.

    def release(self, fd: int) -> None:
        """Close a descriptor :meth:`reach` returned, unless it is a root's."""
        if fd not in self._fds:
            os.close(fd)

    def resolve(self, raw: str, access: Access, follow_links: bool) -> ResolvedPath:
        """The path policy's answer for ``raw``.

        The policy's ``realpath`` reads links by name: one swapped away between its ``lstat``
        and its ``readlink`` fails with EINVAL or ENOENT, and the path is resolved again.
        """
        for _ in range(MAX_HOPS):
            try:
                return self._resolver(raw, access, follow_links)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOENT):
                    raise
        raise ToolError(
            ErrorCode.ACCESS_DENIED,
            f"{echoed(raw)} kept changing while it was being resolved (a symbolic link on the way is being swapped); try again",
        )

    def redirect(self, p: ResolvedPath, here: str, target: str, rest: tuple[str, ...] | list[str]) -> ResolvedPath:
        """Where a link met at ``here`` leads, through the path policy like any path a client names."""
        raw = os.path.join(here, target, *rest)
        try:
            return self.resolve(raw, p.access, p.follows_links)
        except ToolError as exc:
            if exc.code is not ErrorCode.ACCESS_DENIED:
                raise
            raise ToolError(
                ErrorCode.ACCESS_DENIED,
                f"{p} changed while in use: a symbolic link on the way now leads outside the allowed directories",
            ) from None


def loop_error(p: ResolvedPath) -> ToolError:
    return ToolError(ErrorCode.ACCESS_DENIED, f"{p} goes through more than {MAX_HOPS} symbolic links (a loop?)")


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


# -- whether the roots lie on local disks --------------------------------------------------

# Whether the roots lie on local disks, where a metadata call or a small read cannot hang.
#
# A quick tool (:attr:`fsmcp.Tool.quick`) runs on the event loop only while this holds: on a
# network or user-space file system (NFS, SMB, FUSE, …) a ``stat`` can wait for a server that
# is gone, and on the loop that wait would stall every call of every client. The mount table is
# read at start-up and read again when the kernel says it changed (``/proc/self/mountinfo``
# polls ``POLLPRI`` then), which is asked at most every :data:`RECHECK` seconds: a share
# mounted inside a root later is seen within that time.


MOUNTINFO = "/proc/self/mountinfo"
LOCAL_TYPES = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "bcachefs", "f2fs", "zfs", "jfs", "reiserfs", "nilfs2",
     "tmpfs", "ramfs", "overlay", "squashfs", "erofs", "vfat", "exfat", "ntfs3", "hfsplus"}
)
"""File systems served by the kernel from local storage or memory; any other type (network,
FUSE, procfs, whose files can block) keeps every call in a worker thread."""
RECHECK = 0.05
"""Seconds between two looks at whether the mount table changed, so that a call does not pay
a system call for it every time."""
_OCTAL = re.compile(r"\\([0-7]{3})")


def mount_field(field: str) -> str:
    """A path field of ``mountinfo``, which writes a space, a tab, a newline and a backslash as \\040, \\011, \\012, \\134."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def mount_table(text: str) -> list[tuple[str, str]]:
    """``(mount point, file system type)`` of each line of a ``mountinfo`` text."""
    table = []
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if len(fields) > sep + 1 and len(fields) > 4:
            table.append((mount_field(fields[4]), fields[sep + 1]))
    return table


def all_local(roots: Iterable[Path], table: list[tuple[str, str]]) -> bool:
    """Whether each root's own mount and every mount below a root is of a local type."""
    for root in roots:
        top = str(root)
        below = top.rstrip("/") + "/"
        # The mount holding the root is the last one listed at its longest enclosing point.
        holding = None
        for point, kind in table:
            if point == top or point.startswith(below):
                if kind not in LOCAL_TYPES:
                    return False
            if top == point or top.startswith(point.rstrip("/") + "/"):
                if holding is None or len(point) >= len(holding[0]):
                    holding = (point, kind)
        if holding is None or holding[1] not in LOCAL_TYPES:
            return False
    return True


class LocalRoots:
    """:func:`all_local` of the operator's roots, kept current as the mount table changes."""

    def __init__(self, roots: Iterable[Path], mountinfo: str = MOUNTINFO):
        self._roots = list(roots)
        self._lock = threading.Lock()
        try:
            self._fd: int | None = os.open(mountinfo, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._fd = None  # no mount table to read: nothing is known to be local
            self._local = False
            return
        weakref.finalize(self, os.close, self._fd)
        self._next = 0.0
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLPRI)
        self._local = self._read()

    def __call__(self) -> bool:
        if self._fd is None:
            return False
        now = time.monotonic()
        if now < self._next:
            return self._local
        with self._lock:  # a poll reports a change once: the one who saw it reads the table
            self._next = now + RECHECK
            if self._poll.poll(0):
                self._local = self._read()
            return self._local

    def _read(self) -> bool:
        chunks = []
        os.lseek(self._fd, 0, os.SEEK_SET)
        while chunk := os.read(self._fd, 1 << 16):
            chunks.append(chunk)
        return all_local(self._roots, mount_table(b"".join(chunks).decode("utf-8", "surrogateescape")))
