"""Saved copies of paths inside the roots, and putting them back (:meth:`FileSystem.snapshot`)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from . import dirfd, temporaries
from .roots import Confinement, Created, ResolvedPath
from ..api.errors import ToolError


_UNSET = object()
"""A record's ``left`` until the call's primitive that changes its path has returned."""


class _Record:
    """One path the call changed: what was there before (a copy in the store, a directory's mode,
    or nothing), and what the call left there (:meth:`Snapshot._node`), noted under the path's lock."""

    __slots__ = ("path", "copy", "mode", "left", "moved_from", "others", "was_dir")

    def __init__(self, path: ResolvedPath, copy: str | None = None, mode: int | None = None):
        self.path = path
        self.copy = copy
        """The saved copy's name in the store; None: nothing was there, or a directory (``mode``)."""
        self.mode = mode
        """A directory that was there and stays one (a mkdir, a chmod): only its mode is put back."""
        self.left: object = _UNSET
        self.moved_from: Path | None = None
        """The path whose content the call moved here: the only copy of it while that path is kept."""
        self.others = False
        """Someone else changed the path between two changes of the call: the copy is their work."""
        self.was_dir = False
        """A directory was there as the call's latest change of the path began."""

    @property
    def made(self) -> bool:
        """Nothing was there: what is there is the call's making (or someone else's)."""
        return self.copy is None and self.mode is None


class Snapshot:
    """What :meth:`FileSystem.snapshot` watches; see there.

    Nothing is copied when the snapshot is made: each path inside the watched ones is saved when
    one of the call's primitives is about to change it, under that path's lock (so a path is
    saved as the call found it), and what the primitive left there is noted under the same lock
    when it returns (:func:`noting`). A rollback takes back only those changes, each only where
    the path is still as the call left it: another session's file, even one written into a
    directory the call made, is never the call's to remove or to put back over.

    The copies live in a private temporary directory outside the roots; inside the roots every
    read and every change goes through the roots' descriptors like any other primitive.
    """

    def __init__(
        self, conf: Confinement, watchers: list[Snapshot], restored: Callable[..., None] = lambda *paths: None,
        check_cancelled: Callable[[], None] = lambda: None, hold: Callable[[Path], None] = lambda path: None,
    ) -> None:
        self._conf = conf
        self._watchers = watchers
        """The live snapshots the call's primitives report to: this one is in it until restored or discarded."""
        self._hold = hold
        """The call's lock on a path, held to its end: a path is looked at and put back under it."""
        self._check_cancelled = check_cancelled
        """The call's: a copy being recorded stops when it is cancelled (a restore never does)."""
        self._restored = restored
        self._store, self._noted = _store()
        self._watched: set[Path] = set()
        self._records: dict[Path, _Record] = {}
        self._copies = 0
        self.kept: list[Path] = []
        """After :meth:`restore`: the paths left as someone else left them (their change kept)."""
        self.stayed: dict[Path, Path] = {}
        """After :meth:`restore`: paths left where the call had moved another path's content, that
        path being kept: each holds the only copy of what the other held before."""
        self.copies: Path | None = None
        """After a :meth:`restore` that failed, or that left paths with saved copies: the directory
        of the saved copies, kept for good (no later start sweeps it): they may be the only place
        the old contents are."""
        self.kept_copies: dict[Path, Path] = {}
        """After :meth:`restore`: each path not put back (:attr:`kept`, :attr:`stayed`, or below
        one) whose saved copy holds what was there before the call, and where that copy is kept."""
        watchers.append(self)

    def add(self, p: ResolvedPath) -> None:
        """Watch one more path: what the call changes at, in or for it (the directories made on
        the way) is saved as it is changed, and can be taken back."""
        self._watched.add(p.path)

    def _covers(self, path: Path) -> bool:
        watched = self._watched
        return path in self._records or path in watched or any(parent in watched for parent in path.parents)

    def _before(self, p: ResolvedPath, whole: bool) -> list[ResolvedPath]:
        """Before the call's primitive changes ``p`` (under its lock): save what is there unless
        saved already, and note the missing directories above it that the primitive may make.
        ``whole``: a directory there may go as a whole (it is copied, tree and all).
        Returns the paths to look at again when the primitive has returned."""
        node = self._node(p)
        record = self._records.get(p.path)
        if record is not None:
            if record.left is not _UNSET and node != record.left:
                # Someone else changed it since the call did: their change is what the call now
                # changes, so that is what a rollback puts back (and says it kept).
                if record.copy is not None:
                    with self._opened() as store:
                        dirfd.remove_quietly(store, record.copy)
                record = self._records[p.path] = self._save(p, whole, node)
                record.others = True
            record.was_dir = _is_dir(node)
            return [p]
        record = self._records[p.path] = self._save(p, whole, node)
        record.was_dir = _is_dir(node)
        chain = [p]
        parent = p
        while record.made and parent.path.parent != parent.path:
            parent = ResolvedPath(parent.path.parent, p.root, p.access, False)
            if parent.path in self._records or self._node(parent) is not None:
                break
            self._records[parent.path] = _Record(parent)
            chain.append(parent)
        return chain

    def _after(self, chain: list[ResolvedPath], source: tuple[Snapshot, ResolvedPath] | None, arrived: bool) -> None:
        """The call's primitive changed ``chain[0]`` and may have made the others: note what it left,
        under the same lock. ``source``: a rename's source (its snapshot and path); ``arrived``: a
        tree arrived whole (a copy): its every entry is the call's to take away."""
        for q in chain:
            self._records[q.path].left = self._node(q)
        p = chain[0]
        record = self._records[p.path]
        if source is not None:
            owner, src = source
            moved = owner._records.get(src.path)
            if moved is not None and moved.made:
                # The call's own making moved on (staged work put in place): its records go with it.
                for path in _below(owner._records, src.path) if _is_dir(record.left) else ():
                    below = owner._records.pop(path)
                    target = p.path / path.relative_to(src.path)
                    below.path = ResolvedPath(target, p.root, p.access, False)
                    self._records.setdefault(target, below)
                return
            record.moved_from = src.path
            arrived = True
        if arrived and _is_dir(record.left):
            with self._conf.at(p) as place:
                names = list(dirfd.tree_below(place.fd, place.name))
            for rel in names:
                target = p.path / rel
                if target not in self._records:
                    entry = self._records[target] = _Record(ResolvedPath(target, p.root, p.access, False))
                    entry.left = self._node(entry.path)
        if record.left is None and record.was_dir:
            # Gone (removed, moved away): what the call had left below it went with it.
            for path in _below(self._records, p.path):
                below = self._records[path]
                if below.left is not _UNSET:
                    below.left = None

    def changed(self) -> set[Path]:
        """The paths someone else changed since the call left them, looked at under each path's
        lock (held to the call's end, so nothing changes them before :meth:`restore`)."""
        found = set()
        for path, record in self._records.items():
            if record.left is _UNSET:
                continue
            self._hold(path)
            if self._node(record.path) != record.left:
                found.add(path)
        return found

    def restore(self, kept: set[Path] | None = None) -> None:
        """Take back what the call changed, but where someone else changed it since (``kept``, by
        default :meth:`changed`; putting it back would destroy their work, which nothing records).
        What the call left is removed (a directory it made only once empty), then what was there
        is put back; docs/writing-plugins.md (``snapshot``) says what stays and which copies are kept.

        Raises OSError when a path could not be put back; the copies are then kept.
        """
        self._unwatch()
        kept = self.changed() if kept is None else set(kept)
        records = [r for r in self._records.values() if r.left is not _UNSET]
        self.stayed = {r.path.path: r.moved_from for r in records if r.moved_from in kept and r.path.path not in kept}
        stays = [*kept, *self.stayed]
        todo = [r for r in records if not any(r.path.path == q or r.path.path.is_relative_to(q) for q in stays)]
        blocked: set[Path] = set()
        try:
            # A restore runs to the end even for a cancelled call (its copies are not handed the
            # call's check): stopping half-way would leave the mix of old and new that the snapshot exists to undo.
            for r in sorted(todo, key=lambda r: len(r.path.path.parts), reverse=True):
                if r.left is not None and r.mode is None and not self._remove(r):
                    blocked.add(r.path.path)  # a directory the call made, now holding someone else's entries
            with self._opened() as store:
                for r in sorted(todo, key=lambda r: len(r.path.path.parts)):
                    if r.path.path in blocked:
                        continue
                    if r.copy is not None:
                        self._put(store, r.copy, r.path)
                    elif r.mode is not None:
                        self._chmod(r.path, r.mode)
        except ToolError as exc:
            # A link swapped in on the way out of the roots: as much a failure to restore as a full disk.
            raise PermissionError(errno.EACCES, f"{exc.message}; {self._keep()}") from None
        except OSError as exc:
            raise OSError(exc.errno, f"{exc.strerror or exc}; {self._keep()}") from None
        finally:
            self._restored(*self._records)
        others = {r.path.path for r in todo if r.others}
        self.kept = sorted((kept | blocked | others) & set(self._records))
        restored = set(todo)
        left = [r for r in records if r.copy is not None and r not in restored]
        if left:
            self._keep_only(left)
        else:
            self.discard()

    def kept_note(self) -> str:
        """What a tool's error says after a restore that left :attr:`kept` paths: which, why, what to do
        (and where the copies of what they held before are kept)."""
        one = len(self.kept) == 1
        it, them = ("it", "it") if one else ("they", "them")
        return (
            f"except at {', '.join(map(str, self.kept))}: another call changed {them} (or wrote into a directory this call "
            f"made) meanwhile, so {it} {'was' if one else 'were'} left as that call left {them}. Read {them} to decide what "
            f"{it} should hold; list_changes shows who changed {them}{self._copies_note()}"
        )

    def _copies_note(self) -> str:
        """Where the :attr:`kept_copies` are (the first ten), for :meth:`kept_note`; empty without any."""
        if not self.kept_copies:
            return ""
        saved = [f"what {path} held before this call is kept in {copy}" for path, copy in self.kept_copies.items()]
        more = f"; {len(saved) - 10} more copies are kept in {self._store}" if len(saved) > 10 else ""
        them = "it" if len(saved) == 1 else "them"
        return f"; {'; '.join(saved[:10])}{more} (kept for good: no server removes {them}; read {them} to put back what you need)"

    def _keep_only(self, left: list[_Record]) -> None:
        """After a restore: the copies of ``left`` (paths not put back) kept for good, the others removed."""
        self._unwatch()
        wanted = {r.copy for r in left}
        with self._opened() as store:
            for name in _names(store, "."):
                if name not in wanted:
                    dirfd.remove_quietly(store, name)
        temporaries.LEDGER.done(self._noted)  # no longer a temporary: the next start must not sweep it
        self.copies = self._store
        self.kept_copies = {r.path.path: self._store / str(r.copy) for r in left}
        self._records.clear()

    def _remove(self, r: _Record) -> bool:
        """Remove what the call left at ``r``'s path; False for a directory someone else put entries in."""
        try:
            with self._conf.at(r.path) as place:
                if place.name == ".":
                    return True  # a root is never removed
                if _is_dir(r.left):
                    try:
                        os.rmdir(place.name, dir_fd=place.fd)
                    except OSError as exc:
                        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                            return False
                        raise
                else:
                    os.unlink(place.name, dir_fd=place.fd)
                dirfd.fsync_dir(place.fd)
        except (FileNotFoundError, NotADirectoryError):
            pass
        return True

    def _chmod(self, p: ResolvedPath, mode: int) -> None:
        try:
            with self._conf.at(p) as place:
                dirfd.chmod_at(place.fd, place.name, mode)
        except (FileNotFoundError, NotADirectoryError):
            pass

    def _save(self, p: ResolvedPath, whole: bool, node: tuple[object, ...] | None) -> _Record:
        if node is None:
            return _Record(p)
        if node[0] == "d" and not whole:
            return _Record(p, mode=node[3])  # type: ignore[arg-type]
        copy = str(self._copies)
        self._copies += 1
        with self._conf.at(p) as place, self._opened() as store:
            dirfd.copy_node(place.fd, place.name, store, copy, self._check_cancelled)
        return _Record(p, copy)

    def _node(self, p: ResolvedPath) -> tuple[object, ...] | None:
        """What is at ``p`` now: which node and its mode, and for a file or link its size and
        times (a write in place moves them, a replace makes another node); None: nothing."""
        try:
            with self._conf.at(p) as place:
                st = os.stat(place.name, dir_fd=place.fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (PermissionError, ToolError):
            # Out of sight (a directory above it that may not be searched, or swapped for a link
            # that leads out of the roots): never taken for the call's own state, so a rollback
            # leaves it alone rather than guess (and keeps its saved copy).
            return (object(),)
        if stat.S_ISDIR(st.st_mode):
            return ("d", st.st_dev, st.st_ino, stat.S_IMODE(st.st_mode))
        return ("f", st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _unwatch(self) -> None:
        if self in self._watchers:
            self._watchers.remove(self)

    def _keep(self) -> str:
        """The saved copies kept for good after a failed restore, and where each is, said."""
        self._unwatch()
        temporaries.LEDGER.done(self._noted)  # no longer a temporary: the next start must not sweep it
        self.copies = self._store
        saved = [f"{r.path.path} in {self._store / r.copy}" for r in self._records.values() if r.copy is not None]
        more = f" and {len(saved) - 10} more in {self._store}" if len(saved) > 10 else ""
        return f"the saved copies are kept: {', '.join(saved[:10])}{more}" if saved else f"the saved copies are kept in {self._store}"

    def discard(self) -> None:
        self._unwatch()
        if self.copies is None:  # kept copies are never the snapshot's to remove
            dirfd.remove_tree_quietly(str(self._store))
            if not self._store.exists():
                temporaries.LEDGER.done(self._noted)
        self._records.clear()

    @contextmanager
    def _opened(self) -> Iterator[int]:
        fd = os.open(self._store, dirfd.LIST)
        try:
            yield fd
        finally:
            os.close(fd)

    def _put(self, store: int, copy: str, p: ResolvedPath) -> None:
        """Make ``p`` the saved copy: copied beside it under a temporary name, then renamed over
        what is there (a directory is first set aside, then removed)."""
        created: Created = []
        try:
            with self._conf.at(p, created) as place:
                if place.name == ".":
                    # A root is never replaced (its descriptor must stay the root's): it is emptied and filled.
                    for name in _names(place.fd, "."):
                        dirfd.remove_node(place.fd, name)
                    saved = os.open(copy, dirfd.LIST, dir_fd=store)
                    try:
                        for name in _names(saved, "."):
                            dirfd.copy_node(saved, name, place.fd, name)
                    finally:
                        os.close(saved)
                    return
                if dirfd.lexists(place.fd, place.name):
                    # Gone from its name at once, then deleted: never half a tree under it.
                    gone = temporaries.temp_name(place.name)
                    with temporaries.aside(place.fd, place.name, gone, restore=False):
                        dirfd.remove_node(place.fd, gone)
                # Copied under a temporary name, then renamed: a crash leaves no half copy at the name.
                tmp = temporaries.temp_name(place.name)
                with temporaries.temporary(place.fd, tmp) as noted:
                    try:
                        dirfd.copy_node(store, copy, place.fd, tmp)
                        temporaries.LEDGER.made(noted, place.fd, tmp)
                        os.rename(tmp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
                    except BaseException:
                        dirfd.remove_quietly(place.fd, tmp)
                        raise
        finally:
            for fd, _ in created:
                os.close(fd)


class _Noting:
    """One primitive's change of watched paths: saved before (:func:`noting`), noted when it returns."""

    __slots__ = ("items", "moving", "arrived")

    def __init__(self, items: list[tuple[Snapshot, list[ResolvedPath]] | None], moving: bool, arrived: bool):
        self.items, self.moving, self.arrived = items, moving, arrived

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        # Also after a failure: whatever the primitive left is the call's doing.
        items = self.items
        if self.moving:
            # A rename: the destination first, so that what moves with the source is found there.
            source, destination = items
            if destination is not None:
                owner, chain = destination
                owner._after(chain, (source[0], source[1][0]) if source is not None else None, False)
            if source is not None:
                source[0]._after(source[1], None, False)
            return
        for item in items:
            if item is not None:
                item[0]._after(item[1], None, self.arrived)


NOT_WATCHED: nullcontext[None] = nullcontext()
"""What a change no snapshot watches holds around itself: nothing to note (the standard
library's, so that a call no rollback watches never enters this module)."""


def noting(snapshots: list[Snapshot], paths: tuple[ResolvedPath, ...], *, whole: bool, moving: bool = False, arrived: bool = False) -> _Noting | nullcontext[None]:
    """Before a primitive of the call changes ``paths`` (their locks held): each watched one is
    saved by the call's first snapshot that has it or watches it (``whole``: a directory there may
    go as a whole). The ``with`` block around the change then notes what it left. ``moving``: a
    rename, ``paths`` its source and destination; ``arrived``: a tree may arrive whole (a copy)."""
    if not snapshots:
        return NOT_WATCHED
    items: list[tuple[Snapshot, list[ResolvedPath]] | None] = []
    for p in paths:
        owner = next((s for s in snapshots if p.path in s._records), None) or next((s for s in snapshots if s._covers(p.path)), None)
        items.append(None if owner is None else (owner, owner._before(p, whole)))
    if not any(items):
        return NOT_WATCHED
    return _Noting(items, moving, arrived)


def _is_dir(node: object) -> bool:
    return isinstance(node, tuple) and node[0] == "d"


def _below(records: dict[Path, _Record], path: Path) -> list[Path]:
    """The recorded paths strictly below ``path`` (compared as text: a scan of every record)."""
    prefix = str(path).rstrip("/") + "/"
    return [q for q in records if str(q).startswith(prefix)]


def _names(dir_fd: int, name: str) -> list[str]:
    fd = os.open(name, dirfd.LIST, dir_fd=dir_fd)
    try:
        with os.scandir(fd) as it:
            return [e.name for e in it]
    finally:
        os.close(fd)


def _store() -> tuple[Path, int]:
    """A private directory in the system's temporary directory, in the ledger before it exists."""
    top = tempfile.gettempdir()
    fd = os.open(top, dirfd.LIST)
    try:
        name = temporaries.temp_name("fsmcp-snapshot")
        noted = temporaries.LEDGER.note({"t": "tmp", **temporaries.where(fd), "name": name})
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except BaseException:
            temporaries.LEDGER.done(noted)
            raise
        temporaries.LEDGER.made(noted, fd, name)
    finally:
        os.close(fd)
    return Path(top) / name, noted
