"""The change journal: what each tool call's change replaced, kept so that it can be undone.

The host's default implementation of the change hooks (``fsmcp_before_change``,
``fsmcp_after_change``). Before a path first changes in a call, its file, link or whole tree
is copied (through the roots' descriptors) into the call's pending directory, or its absence
noted, and that record is appended to the call's ``records`` there durably (after its
``intent.json``, written once): it is on disk before the write that needs it. When the call ends the pending directory,
with a ``meta.json`` naming every path, is renamed into ``changes/`` under the next id, all at
once. The oldest changes are dropped past ``journal_max_changes`` or ``journal_max_bytes``.

A process that dies mid-call (``kill -9``) leaves its pending directory: the next start
(:meth:`Journal.recover`) commits it as an interrupted change, so that an undo takes back
whatever part reached the disk, or rolls a transactional batch back from its copies. Whether
a pending directory's process is gone is told by a lock it holds as long as it lives
(``pending/<pid>-<hex>.lock``), not by its pid, which the system reuses.

Several servers may share one journal: a lock file orders their commits and recoveries. Each
change records the client session that made it, so that an undo without an id takes back the
caller's own change, never another session's.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import logging
import os
import re
import stat as stat_mod
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import journal_restore
from ..paths import dirfd
from ..paths.change import Change, refuse_read_only
from ..api.config import Settings
from ..api.errors import ErrorCode, ToolError
from ..paths.fs import FileSystem, kind_of
from ..paths.state import JOURNAL as NAME, journal_dir
from ..api.hooks import hookimpl
from ..paths.roots import Access, ResolvedPath
from ..api.jsontext import too_deep

log = logging.getLogger("fsmcp.journal")
SESSION_ID = re.compile(r"[0-9a-f]{16}")
"""A session's id as :class:`fsmcp.paths.guard.Session` makes it; a ``meta.json`` is read as untrusted input."""
_OWNER_LOCK = re.compile(r"(\d+-[0-9a-f]{12})\.lock")
_NEW_LOCK = re.compile(r"\.[0-9a-f]{12}\.lock-new")
_CALL_DIR = re.compile(r"(\d+-[0-9a-f]{12})-[0-9a-f]{12}")
"""``pending/``'s names: a process's lock, one being made, and a call's directory (its process's token first)."""


@dataclass
class Record:
    """One path as a change found it: a saved copy (its name in ``data/``), or absent."""

    path: ResolvedPath
    kind: str
    mode: int | None = None
    copy: str | None = None

    size: int = 0
    digest: str | None = None
    """The copy's own, checked before an undo uses it."""
    logged: bool = False
    """Appended to the pending directory's ``records`` already."""

    def to_json(self, after: str | None = None) -> dict[str, Any]:
        found = {"path": str(self.path), "kind": self.kind, "mode": self.mode, "copy": self.copy, "size": self.size, "digest": self.digest}
        if after is not None:
            found["after"] = after
        return found


@dataclass(eq=False)
class _Pending:
    """A call's change while it runs: the copies saved so far, in a directory of its own."""

    journal: Journal
    conf: Any
    change: Change
    records: list[Record] = field(default_factory=list)
    bytes: int = 0
    reason: str | None = None
    undoes: int | None = None
    _dir: Path | None = None
    _logged: dict[str, Any] = field(default_factory=dict)
    """What is on disk already: ``intent`` (written), and the ``reason`` and ``undoes`` as ``records`` holds them."""
    _merged: list[str] = field(default_factory=list)
    """Copies taken into a tree's copy, removed once ``records`` holds the tree's record."""
    removing: set[Path] = field(default_factory=set)
    """Paths the call removes whole (an undo of what a change created): their files are saved
    as hard links where the file system allows, not copied (a created tree of 50,000 files)."""

    @property
    def dir(self) -> Path:
        if self._dir is None:
            token = self.journal.owner()
            self._dir = self.journal.dir / "pending" / f"{token}-{os.urandom(6).hex()}"
            (self._dir / "data").mkdir(parents=True, mode=0o700)
            self.journal.running.add(self)
        return self._dir

    def record(self) -> None:
        """Put on disk, durably, what is new since the last time, before the write that needs it:
        the intent once (``intent.json``), then a line for each record appended to ``records``
        (a tree's record after the smaller ones it takes in), the reason of a give-up, an undo's id."""
        lines = [{"record": r.to_json()} for r in self.records if not r.logged]
        for key in ("reason", "undoes"):
            if getattr(self, key) is not None and self._logged.get(key) != getattr(self, key):
                lines.append({key: getattr(self, key)})
        if not lines:
            return
        if "intent" not in self._logged:
            intent = {"time": self.change.time, "tool": self.change.tool, "session": self.change.session, "transactional": self.change.transactional}
            _write_json(self.dir / "intent.json", intent, durable=True)
            self._logged["intent"] = True
        fd = os.open(self.dir / "records", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            data = "".join(json.dumps(line) + "\n" for line in lines).encode()
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        for r in self.records:
            r.logged = True
        self._logged.update(reason=self.reason, undoes=self.undoes)
        if self._merged:
            with self._data() as data:
                for copy in self._merged:
                    dirfd.remove_tree(data, copy)
            self._merged.clear()

    def add(self, p: ResolvedPath) -> None:
        if self.reason is not None or any(_under(p.path, r.path.path) for r in self.records):
            return  # an earlier record already holds this path's state before the call
        try:
            self._add(p)
        except (OSError, ToolError) as exc:
            self.give_up(f"{p} could not be saved ({getattr(exc, 'strerror', None) or exc})")

    def _add(self, p: ResolvedPath) -> None:
        st = _lstat(self.conf, p)
        if st is None:
            first = p
            while not first.is_root and _lstat(self.conf, up := ResolvedPath(first.path.parent, p.root, p.access, False)) is None:
                first = up
            if not any(_under(r.path.path, first.path) for r in self.records):
                self.records.append(Record(first, "absent"))
            return
        nested = [r for r in self.records if _under(r.path.path, p.path)]
        with self.conf.at(p) as place:
            size = journal_restore.tree_bytes(place.fd, place.name)
            if self.bytes + size > self.journal.max_bytes:
                self.give_up(f"{p} is {size:,} bytes, more than the journal keeps for one change (journal_max_bytes {self.journal.max_bytes:,})")
                return
            if kind_of(st.st_mode) == "other":
                self.give_up(f"{p} is a device, socket or pipe, which the journal does not keep")
                return
            copy = os.urandom(6).hex()
            with self._data() as data:
                dirfd.copy_node(place.fd, place.name, data, copy, link_files=p.path in self.removing)
                for r in nested:  # the tree's copy is made whole as it was before the call
                    self._merge(data, copy, p, r)
                digest = journal_restore.digest_at(data, copy)
        self.bytes += size
        self.records = [r for r in self.records if r not in nested]
        self.records.append(Record(p, kind_of(st.st_mode), st.st_mode & 0o7777, copy, size + sum(r.size for r in nested), digest))

    def _merge(self, data: int, copy: str, top: ResolvedPath, r: Record) -> None:
        rel = os.path.relpath(r.path.path, top.path)
        inside = os.path.join(copy, rel)
        parent, name = os.path.split(inside)
        fd = os.open(parent, dirfd.LIST, dir_fd=data)
        try:
            if dirfd.lexists(fd, name):
                dirfd.remove_tree(fd, name)
            if r.copy is not None:
                # Copied, not moved: until ``records`` holds the tree's record, it names this copy.
                dirfd.copy_node(data, r.copy, fd, name)
                self._merged.append(r.copy)
        finally:
            os.close(fd)

    @contextmanager
    def _data(self) -> Iterator[int]:
        fd = os.open(self.dir / "data", dirfd.LIST)
        try:
            yield fd
        finally:
            os.close(fd)

    def give_up(self, reason: str) -> None:
        # The copies go; the intent stays (written next), so that a crash still leaves the reason.
        self.reason = reason
        self.records.clear()
        self._merged.clear()
        self.bytes = 0
        if self._dir is not None:
            try:
                _rmtree(self._dir / "data")
            except OSError:
                pass  # left for the commit or the next start to remove with the rest

    def discard(self) -> None:
        if self._dir is not None:
            _rmtree(self._dir)
            self._dir = None
        self.journal.running.discard(self)

    def unchanged(self) -> bool:
        """Whether every path is as it was (a failed call that left nothing behind)."""
        if self.reason is not None:
            return True
        with self._data() as data:
            for r in self.records:
                before = journal_restore.ABSENT if r.copy is None else journal_restore.digest_at(data, r.copy)
                if _digest_or_none(self.conf, r.path) != before:
                    return False  # or out of reach now: what it holds is unknown, the record is kept
        return True


class Journal:
    """The host's change journal; a plugin registered as ``fsmcp.journal`` unless ``journal = "off"`` or ``disable`` names it."""

    def __init__(self, directory: Path, max_bytes: int, max_changes: int):
        # Its real path, fixed at start, as the start compared it with the roots (no root holds
        # it: paths.state.prepare), and a link on the way changed later does not move it.
        self.dir = Path(os.path.realpath(directory))
        self.max_bytes = max_bytes
        self.max_changes = max_changes
        self._lock = threading.RLock()
        self._sweeper: threading.Thread | None = None
        self._sweep_again = False
        self._owner: tuple[str, int] | None = None
        self.running: set[_Pending] = set()
        """This process's calls whose pending directory exists: their copies count toward the caps."""

    @classmethod
    def for_settings(cls, settings: Settings) -> Journal | None:
        directory = journal_dir(settings.journal)
        return None if directory is None else cls(directory, settings.journal_max_bytes, settings.journal_max_changes)

    # -- the hooks ----------------------------------------------------------------------------

    @hookimpl
    def fsmcp_before_change(self, change: Change, paths: list[ResolvedPath], fs: FileSystem) -> None:
        pending = change.state.get(NAME)
        if pending is None:
            pending = change.state[NAME] = _Pending(self, fs.confinement, change)
        # A cancelled call's copies are made all the same (they are not handed its cancellation):
        # its write may still come, and a change without its copies could not be undone.
        for p in paths:
            pending.add(p)
        try:
            pending.record()
        except OSError as exc:
            pending.give_up(f"the journal {self.dir} could not be written ({exc.strerror or exc})")

    @hookimpl
    def fsmcp_after_change(self, change: Change, failed: bool) -> str | None:
        pending: _Pending | None = change.state.pop(NAME, None)
        if pending is None:
            return None
        try:
            return self._commit(change, pending, failed)
        except OSError as exc:
            pending.discard()
            log.warning("the journal could not keep change of %s: %s", change.tool, exc)
            return f"This change cannot be undone: the journal {self.dir} could not be written ({exc.strerror or exc})."

    def _commit(self, change: Change, pending: _Pending, failed: bool) -> str | None:
        if failed and pending.unchanged():
            pending.discard()
            return None
        afters = [(r, _digest_or_none(pending.conf, r.path)) for r in pending.records]
        # A path out of reach now (a link swapped in on its way): recorded all the same, so that
        # its copy can be undone once the way is mended; unknown, what it holds counts as changed
        # (absent is what the recovery of a cut-short change records then, too).
        records = [r.to_json(after or journal_restore.ABSENT) for r, after in afters]
        unreached = [str(r.path) for r, after in afters if after is None]
        meta = {
            "time": change.time,
            "tool": change.tool,
            "session": change.session,
            "paths": _shown(change, pending),
            "records": records,
            "reason": pending.reason,
            "undoes": pending.undoes,
            "undone": None,
        }
        directory = pending.dir
        self.running.discard(pending)
        with self._locked():
            number = self._file(directory, meta, pending.bytes)
        change.number = number
        if pending.reason is not None:
            return f"This change cannot be undone: {pending.reason}."
        if unreached:
            # A failed call's notes reach no one (its error speaks): the log says it then.
            log.warning("change %s (%s): %s could not be read after it", number, change.tool, ", ".join(unreached))
            it = "it" if len(unreached) == 1 else "them"
            return (
                f"The journal could not read {', '.join(unreached)} after this change (a symbolic link on the way now leads "
                f"outside the allowed directories, or a directory on the way cannot be read): once that is mended, "
                f"undo_change {number} with force: true puts back what {it} held before."
            )
        return None

    def _file(self, directory: Path, meta: dict[str, Any], size: int) -> int:
        """Write ``meta.json`` in a pending ``directory`` and rename it into ``changes/``: its id (under the lock)."""
        _write_json(directory / "meta.json", meta)
        changes = self.dir / "changes"
        changes.mkdir(exist_ok=True, mode=0o700)
        # The newest change is never dropped, so the ids kept go on from the highest.
        entries = _entries(changes)
        number = max((n for n, _, _ in entries), default=0) + 1
        name = f"{number:010d}-{size}"
        os.rename(directory, changes / name)
        for done in ("intent.json", "records"):
            try:
                os.unlink(changes / name / done)
            except OSError:
                pass  # meta.json is what is read
        entries.append((number, size, name))
        if meta["undoes"] is not None:
            self._mark(meta["undoes"], number)
        self._evict(changes, entries)
        return number

    def _evict(self, changes: Path, entries: list[tuple[int, int, str]]) -> None:
        entries.sort()
        # The copies of this process's calls still running count too (another process's are
        # counted once they are changes, or recovered).
        total = sum(size for _, size, _ in entries) + sum(p.bytes for p in list(self.running))
        dropped = self.dir / "dropped"
        while entries and (len(entries) > self.max_changes or total > self.max_bytes):
            _, size, name = entries.pop(0)
            total -= size
            dropped.mkdir(exist_ok=True, mode=0o700)
            # Out of the journal at once, by a rename; deleted off the call's path (8 ms here).
            os.rename(changes / name, dropped / name)
            self._sweep()

    def _sweep(self) -> None:
        with self._lock:
            if self._sweeper is not None and self._sweeper.is_alive():
                self._sweep_again = True
                return
            self._sweeper = threading.Thread(target=self._empty_dropped, name="fsmcp-journal-sweep", daemon=True)
            self._sweeper.start()

    def _empty_dropped(self) -> None:
        while True:
            with self._lock:
                self._sweep_again = False
            try:
                for name in os.listdir(self.dir / "dropped"):
                    _rmtree(self.dir / "dropped" / name)
            except OSError:
                pass
            with self._lock:
                if not self._sweep_again:
                    self._sweeper = None
                    return

    # -- interrupted calls ----------------------------------------------------------------------

    def owner(self) -> str:
        """This process's token in ``pending/``, its lock taken (once): held until the process ends."""
        with self._lock:
            if self._owner is not None and self._owner[0].startswith(f"{os.getpid()}-"):
                return self._owner[0]
            pending = self.dir / "pending"
            pending.mkdir(parents=True, exist_ok=True, mode=0o700)
            token = f"{os.getpid()}-{os.urandom(6).hex()}"
            while True:
                # Locked before it has its name: a lock seen under its name is held, or its process is gone.
                new = pending / f".{os.urandom(6).hex()}.lock-new"
                fd = os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    os.rename(new, pending / f"{token}.lock")
                    break
                except FileNotFoundError:
                    os.close(fd)  # a recovery took it for a dead process's, between its making and its lock
            self._owner = (token, fd)
            atexit.register(self._release, token, fd)
            return token

    def _release(self, token: str, fd: int) -> None:
        """At exit: the lock's name goes with it, unless a call of this process left its directory."""
        # A call still running (abandoned at exit) keeps the lock to the process's very end.
        try:
            if not any(n.startswith(f"{token}-") for n in os.listdir(self.dir / "pending")):
                os.unlink(self.dir / "pending" / f"{token}.lock")
        except OSError:
            pass  # the next start removes it

    def recover(self, fs: FileSystem) -> list[str]:
        """Finish every change whose process died mid-call; a line for each, for stderr.

        A pending directory is untrusted input, as a change is: one that fails its checks is
        removed. One whose paths lie outside this server's roots is left for a server over them.
        """
        said: list[str] = []
        if os.path.isdir(self.dir / "changes"):
            with self._locked():
                self._tidy_changes()
        try:
            if not stat_mod.S_ISDIR(os.lstat(self.dir / "pending").st_mode):
                return said
        except FileNotFoundError:
            return said
        with self._locked():
            top = _open_below(self.dir, ["pending"], dirfd.LIST)
            held: dict[str, int | None] = {}  # a token's lock taken (its process is gone), or None (it lives)
            try:
                names = sorted(os.listdir(top))
                for name in names:
                    try:
                        self._recover_entry(fs, top, name, held, said)
                    except OSError as exc:
                        # One entry on its own (a directory planted where a lock is expected): said, the others go on.
                        said.append(f"could not recover {self.dir}/pending/{name} ({exc.strerror or exc}); it is left as it is")
                for token, fd in held.items():
                    if fd is not None:
                        dirfd.unlink_quietly(top, f"{token}.lock")
            finally:
                for fd in held.values():
                    if fd is not None and fd >= 0:
                        os.close(fd)
                os.close(top)
        return said

    def _tidy_changes(self) -> None:
        """A process killed inside ``_write_json`` leaves its temporary in a change's directory
        (renamed there with a pending one): removed, under the journal's lock (every write of a
        change's JSON holds it, so none is in progress)."""
        changes = self.dir / "changes"
        for _, _, name in _entries(changes):
            try:
                for leftover in os.listdir(changes / name):
                    if _JSON_TMP.fullmatch(leftover):
                        os.unlink(changes / name / leftover)
            except OSError:
                continue  # dropped meanwhile, or not a directory: the checks on reading say so

    def _recover_entry(self, fs: FileSystem, top: int, name: str, held: dict[str, int | None], said: list[str]) -> None:
        """One entry of ``pending/``: a lock, a call's directory, or what the journal does not make."""
        if _NEW_LOCK.fullmatch(name):
            if (fd := _dead(top, name)) is not None:
                dirfd.unlink_quietly(top, name)  # its process died before naming it
                if fd >= 0:
                    os.close(fd)
            return
        owned = _OWNER_LOCK.fullmatch(name) or _CALL_DIR.fullmatch(name)
        if owned is None:
            dirfd.remove_tree(top, name)
            said.append(f"removed {self.dir}/pending/{name}, which the journal does not make")
            return
        token = owned[1]
        if self._owner is not None and token == self._owner[0]:
            return
        if token not in held:
            held[token] = None  # its lock cannot be taken (an error below): its entries are left
            held[token] = _dead(top, f"{token}.lock")
        if held[token] is None or name.endswith(".lock"):
            return  # its process lives; or its lock, removed below
        if line := self._recover_one(fs, top, name):
            said.append(line)

    def _recover_one(self, fs: FileSystem, top: int, name: str) -> str | None:
        where = f"{self.dir}/pending/{name}"
        try:
            meta, bytes_, relinked, unrolled = self._interrupted(fs, top, name)
        except _Left as left:
            return f"left {where} for a server whose roots hold {left}"
        except (OSError, ValueError, ToolError) as exc:
            dirfd.remove_tree(top, name)
            why = getattr(exc, "message", None) or getattr(exc, "strerror", None) or exc
            return f"removed {where}, an interrupted change that fails its checks ({why})"
        if meta is None:
            dirfd.remove_tree(top, name)
            return None  # nothing had reached the roots
        number = self._file(self.dir / "pending" / name, meta, bytes_)
        head = f"change {number} ({meta['tool']}) was cut short: its server (pid {name.partition('-')[0]}) ended mid-call"
        if meta["interrupted"] == "rolled back":
            return f"{head}; rolled back from the journal's copies, as a transactional batch"
        if relinked is not None:
            return f"{head}; kept, neither checked nor rolled back: {relinked}. Put the directory back where the link is, then undo_change {number} with force: true"
        if unrolled is not None:
            return f"{head}; kept as it stood, as a transactional batch whose {unrolled}: undo_change {number} takes it back once that is mended"
        return f"{head}; kept as it stood: undo_change {number} takes back what reached the disk"

    def _interrupted(self, fs: FileSystem, top: int, name: str) -> tuple[dict[str, Any] | None, int, str | None, str | None]:
        """The change a dead process's pending directory ``name`` records, its after-digests taken now
        (or rolled back, if a transactional batch), with its copies' bytes; None when nothing changed.
        The third: why it could be neither checked nor rolled back (a link now on a path's way); the
        fourth: why a transactional batch's rollback failed (the change is then kept as it stands)."""
        fd = os.open(name, dirfd.LIST, dir_fd=top)
        try:
            try:
                intent = _read_json(fd, "intent.json")
            except FileNotFoundError:
                return None, 0, None, None  # made, but no write was announced yet
            if not isinstance(intent, dict) or not isinstance(intent.get("transactional"), bool):
                raise ValueError("intent.json's transactional is missing or not what the journal writes")
            meta = {k: intent.get(k) for k in ("time", "tool", "session")}
            meta.update(_replayed(fd), undone=None, interrupted="kept", id=0)
            records = meta["records"]
            for r in records:
                r["after"] = journal_restore.ABSENT  # a placeholder for the checks; taken below
            problem = _problem(meta)
            if problem is None and not _session_read(meta):
                problem = "its session is not a session's id"
            if problem is not None:
                raise ValueError(problem)
            items = []
            relinked = unrolled = None
            for r in records:
                try:
                    p = fs.resolve(r["path"], Access.WRITE, follow_links=False)
                except ToolError:
                    raise _Left(r["path"]) from None
                if str(p) != r["path"] and relinked is None:  # both as shown, as records keep them
                    # A link on the way now: nothing is read or put back through it, but the change is
                    # kept (not removed), for an undo once the directory is back where the link is.
                    relinked = f"{r['path']} now leads to {p}: a symbolic link stands on the way"
                items.append((p, r))
            store = os.open("data", dirfd.LIST, dir_fd=fd)
            try:
                _check_copies(store, meta)
                conf = fs.confinement
                if relinked is None:
                    for p, r in items:
                        r["after"] = _digest_or_none(conf, p) or journal_restore.ABSENT
                    if all(r["after"] == (r["digest"] or journal_restore.ABSENT) for r in records):
                        return None, 0, None, None
                if intent["transactional"] and not meta["reason"] and relinked is None:
                    try:
                        journal_restore.put_back(conf, store, [(p, r["copy"]) for p, r in items])
                    except OSError as exc:
                        # Kept as it now stands, for an undo once the cause is mended: never removed
                        # with the copies that undo needs.
                        unrolled = f"its rollback failed ({exc.strerror or exc})"
                    else:
                        meta.update(undone=time.time(), interrupted="rolled back")
                    for p, r in items:
                        r["after"] = _digest_or_none(conf, p) or journal_restore.ABSENT
                size = journal_restore.tree_bytes(fd, "data")
            finally:
                os.close(store)
        finally:
            os.close(fd)
        del meta["id"]
        meta["paths"] = [r["path"] for r in records if _visible_path(r["path"], records)]
        return meta, size, relinked, unrolled

    # -- reading and undoing --------------------------------------------------------------------

    def changes(self) -> Iterator[dict[str, Any]]:
        """Every sound change kept, newest first, as its ``meta.json`` with ``id`` added.

        ``session`` is the id of the session that made it, None for a change kept before
        changes recorded one; an entry whose ``session`` is anything else is damaged.
        """
        for meta in self._kept():
            if "damaged" not in meta:
                yield meta

    def _kept(self) -> Iterator[dict[str, Any]]:
        """Every change kept, newest first; one that fails its checks as ``{"id": N, "damaged": why}``."""
        changes = self.dir / "changes"
        try:
            entries = sorted(_entries(changes), reverse=True)
        except FileNotFoundError:
            return
        for number, _, name in entries:
            try:
                meta = self._meta(name)
            except FileNotFoundError:
                continue  # dropped by another server meanwhile
            except (OSError, ValueError) as exc:
                yield {"id": number, "damaged": f"its meta.json cannot be read ({getattr(exc, 'strerror', None) or exc})"}
                continue
            problem = _problem(meta)
            if problem is None and not _session_read(meta):
                problem = "its session is not a session's id"
            if problem is not None:
                yield {"id": number, "damaged": problem}
                continue
            meta["id"] = number
            yield meta

    def _meta(self, name: str) -> Any:
        fd = _open_below(self.dir, ["changes", name], dirfd.LIST)
        try:
            return _read_json(fd, "meta.json")
        finally:
            os.close(fd)

    def undo(self, fs: FileSystem, number: int | None, force: bool, visible: Any, session: str, whole: Any) -> tuple[dict[str, Any], list[str]]:
        """Put back what change ``number`` (default: ``session``'s latest not undone) replaced.

        Returns the change undone and the paths restored. ``visible(meta)`` says whether a
        change is the caller's to see, ``whole(meta)`` whether it may see every path of it (a
        change is undone whole or not at all). Raises ``EDIT_CONFLICT`` when a path changed since
        the change, unless ``force``; nothing is restored then.
        """
        with self._lock:
            meta = self._target(number, visible, session)
            if not whole(meta):
                raise ToolError(
                    ErrorCode.ACCESS_DENIED,
                    f"change {meta['id']} also changed paths outside this client's roots, and a change is undone whole or "
                    "not at all; nothing was restored. A client whose roots hold all of them can undo it",
                )
            name = self._name(meta["id"])
            if meta["reason"]:
                raise ToolError(ErrorCode.INVALID_PARAMS, f"change {meta['id']} cannot be undone: {meta['reason']}")
            # The path policy, secrets included, as for any change: each path's own real path.
            items = [(fs.resolve(r["path"], Access.WRITE, follow_links=False), r) for r in meta["records"]]
            refuse_read_only(fs.call.tool, [p for p, _ in items])
            for p, r in items:
                if str(p) != r["path"]:  # both as shown, as records keep them
                    # A path is kept by its real path: now reached elsewhere, a link stands on the way
                    # that was not there (another root's policy could expose what is restored).
                    raise _relinked(meta["id"], r["path"], p)
            # The paths' locks, as any change holds them: no call of this server or another writes them meanwhile.
            with fs.guard.changing(*(p.path for p, _ in items)):
                # Another server may have undone it while this one waited for the paths (their
                # locks, not this process's journal lock, order two servers' undos).
                again = self._meta(name)
                if isinstance(again, dict) and again.get("undone") is not None:
                    raise ToolError(ErrorCode.INVALID_PARAMS, f"change {meta['id']} was undone meanwhile, by another session; list_changes shows the others")
                self._put_back(fs, meta, name, items, force)
            # What this session had read there is gone, as after a move or delete.
            fs.guard.moved(*(p.path for p, _ in items))
            with self._locked():
                self._mark(meta["id"], True)
                if meta.get("undoes") is not None:
                    self._mark(meta["undoes"], None)  # undoing an undo: the change it undid is back
        return meta, [str(p) for p, _ in items]

    def _put_back(self, fs: FileSystem, meta: dict[str, Any], name: str, items: list[tuple[ResolvedPath, dict[str, Any]]], force: bool) -> None:
        conf = fs.confinement
        if not force:
            changed = [str(p) for p, r in items if _digest_or_none(conf, p) != r["after"]]
            if changed:
                raise ToolError(
                    ErrorCode.EDIT_CONFLICT,
                    f"{', '.join(changed)} changed since change {meta['id']} (by someone else, or a later change: undo that "
                    "first); nothing was restored. Pass force: true to restore anyway",
                    {"paths": changed},
                )
        change = fs.call.change  # the undo's own call
        if change is not None:
            pending = change.state.get(NAME)
            if pending is None:
                pending = change.state[NAME] = _Pending(self, conf, change)
            pending.removing.update(p.path for p, r in items if r["copy"] is None)
            change.before((p for p, _ in items), call=fs.call)
            pending.undoes = meta["id"]
            try:
                pending.record()  # before the first copy goes back: a crash leaves an undo, marked as one
            except OSError:
                pass  # the undo goes on; cut short, it would be recorded as a change of its own

        store = _open_below(self.dir, ["changes", name, "data"], dirfd.LIST)
        try:
            _check_copies(store, meta)
            journal_restore.put_back(conf, store, [(p, r["copy"]) for p, r in items])
        finally:
            os.close(store)

    def _target(self, number: int | None, visible: Any, session: str) -> dict[str, Any]:
        for meta in self._kept():
            if number is not None:
                if meta["id"] == number:
                    if "damaged" in meta:
                        raise _damaged(number, meta["damaged"])
                    if not visible(meta):
                        break
                    if meta["undone"] is not None:
                        raise ToolError(ErrorCode.INVALID_PARAMS, f"change {number} is undone already; list_changes shows the others")
                    return meta
                continue
            if "damaged" not in meta and meta["session"] == session and visible(meta) and meta["undone"] is None and meta.get("undoes") is None:
                return meta
        if number is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                "this session has no change left to undo (without an id, undo_change takes back only this session's own "
                "changes); to undo another session's change, pass its id from list_changes",
            )
        raise ToolError(ErrorCode.NOT_FOUND, f"no change {number} in this server's journal; list_changes shows the ids kept")

    def _name(self, number: int) -> str:
        for n, _, name in _entries(self.dir / "changes"):
            if n == number:
                return name
        raise ToolError(ErrorCode.NOT_FOUND, f"change {number} was dropped from the journal meanwhile")

    def _mark(self, number: int, undone: Any) -> None:
        try:
            name = self._name(number)
            meta = self._meta(name)
        except (ToolError, OSError, ValueError):
            return  # dropped already: nothing to mark
        if _problem(meta) is not None:
            return  # damaged since: left as it is, for undo_change to report
        path = self.dir / "changes" / name / "meta.json"
        meta["undone"] = (time.time() if undone is True else undone) if undone is not None else None
        _write_json(path, meta)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)


class _Left(Exception):
    """A path of an interrupted change that this server's roots do not hold."""


def _dead(top: int, name: str) -> int | None:
    """The lock ``name`` in ``pending/``, taken (its process is gone): its descriptor, or -1 when
    it is missing; None when a live process holds it."""
    try:
        fd = os.open(name, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
    except FileNotFoundError:
        return -1  # its process made its lock first and held it to its end: gone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _replayed(dir_fd: int) -> dict[str, Any]:
    """``records``, replayed as the call built its list: a record takes in those under its path,
    a give-up's reason drops them all. A last line cut short was being written when the process
    died, before the write it announced: it is left out."""
    found: dict[str, Any] = {"records": [], "reason": None, "undoes": None, "paths": []}
    try:
        lines = _read(dir_fd, "records").split(b"\n")[:-1]  # what follows the last newline was cut short
    except FileNotFoundError:
        return found
    for line in lines:
        item = _loads(line)
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in ("record", "reason", "undoes"):
            raise ValueError("its records hold a line the journal does not write")
        if "record" in item:
            r = item["record"]
            if not isinstance(r, dict) or not isinstance(r.get("path"), str):
                raise ValueError("its records hold a record without a path")
            found["records"] = [x for x in found["records"] if not _under(Path(x["path"]), Path(r["path"]))] + [r]
        elif "reason" in item:
            found.update(reason=item["reason"], records=[])
        else:
            found["undoes"] = item["undoes"]
    return found


def _read_json(dir_fd: int, name: str) -> Any:
    return _loads(_read(dir_fd, name))


def _read(dir_fd: int, name: str) -> bytes:
    """One of a change's files, whole; one that is no regular file is damage."""
    fd = os.open(name, dirfd.READ, dir_fd=dir_fd)
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"its {name} is no regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _loads(data: bytes) -> Any:
    """A journal file's JSON; nested past what the journal writes, damage (a recursive parser would exhaust the stack)."""
    if too_deep(data):
        raise ValueError("it nests arrays and objects deeper than the journal writes")
    return json.loads(data)


def _visible_path(path: str, records: list[dict[str, Any]]) -> bool:
    # As _shown: a path under a record of an absence that is absent again is not worth showing.
    return not any(r["kind"] == "absent" and r["after"] == journal_restore.ABSENT and _under(Path(path), Path(r["path"])) for r in records)


def _session_read(meta: dict[str, Any]) -> bool:
    """Whether ``meta``'s ``session`` is a session's id, or absent (then None: kept before sessions were)."""
    if "session" not in meta:
        meta["session"] = None
        return True
    session = meta["session"]
    return isinstance(session, str) and SESSION_ID.fullmatch(session) is not None


def _shown(change: Change, pending: _Pending) -> list[str]:
    # A path that neither was there before the call nor is there after (a staging directory)
    # is not worth showing.
    absent = [r.path.path for r in pending.records if r.kind == "absent"]
    shown = []
    for p in change.paths:
        if any(_under(p.path, a) for a in absent) and _gone(pending.conf, p):
            continue
        shown.append(str(p))
    return shown


def _check_copies(store: int, meta: dict[str, Any]) -> None:
    """Each saved copy as recorded: its kind, bytes and digest (names were checked with the rest)."""
    for r in meta["records"]:
        copy = r["copy"]
        if copy is None:
            continue
        try:
            st = dirfd.lstat(store, copy)
        except FileNotFoundError:
            raise _damaged(meta["id"], f"the saved copy of {r['path']} is missing") from None
        if kind_of(st.st_mode) != r["kind"]:
            raise _damaged(meta["id"], f"the saved copy of {r['path']} is a {kind_of(st.st_mode)}, not the {r['kind']} recorded")
        if journal_restore.tree_bytes(store, copy) != r["size"] or journal_restore.digest_at(store, copy) != r["digest"]:
            raise _damaged(meta["id"], f"the saved copy of {r['path']} is not the one recorded (its size or digest differs)")


def _damaged(number: int, problem: str) -> ToolError:
    return ToolError(
        ErrorCode.INTERNAL_ERROR,
        f"change {number} is damaged: {problem}; nothing was restored. Its entry was cut short (a crash?) or changed by "
        "something other than this server; undo other changes (list_changes), or restore these files by hand",
    )


def _relinked(number: int, recorded: str, now: ResolvedPath) -> ToolError:
    return ToolError(
        ErrorCode.ACCESS_DENIED,
        f"{recorded} now leads to {now}: a symbolic link stands on the way that was not there when change {number} was "
        "recorded; nothing was restored. Undo never restores through a link: put the directory back where the link is, "
        "then undo again",
    )


_HEX = re.compile(r"[0-9a-f]{64}")
_COPY = re.compile(r"[0-9a-f]{12}")
"""A saved copy's name: one name inside the change's data directory, as the journal makes them."""
_KINDS = ("file", "directory", "symlink", "absent")


def _problem(meta: Any) -> str | None:
    """What is wrong with a change's ``meta.json`` (types and ranges of what an undo uses), or None.

    Keys it does not know are left alone: a newer server may add some.
    """
    if not isinstance(meta, dict):
        return "meta.json holds no object"
    checks = (
        ("time", _is_time),
        ("tool", lambda v: isinstance(v, str)),
        ("paths", lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v)),
        ("records", lambda v: isinstance(v, list)),
        ("reason", lambda v: v is None or isinstance(v, str)),
        ("undoes", lambda v: v is None or (_is(v, int) and v >= 1)),
        ("undone", lambda v: v is None or _is_time(v)),
    )
    for key, ok in checks:
        if key not in meta or not ok(meta[key]):
            return f"meta.json's {key} is missing or not what the journal writes"
    for r in meta["records"]:
        problem = _record_problem(r)
        if problem is not None:
            return f"meta.json has a record {problem}"
    return None


def _record_problem(r: Any) -> str | None:
    if not isinstance(r, dict):
        return "that is no object"
    path = r.get("path")
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path or os.path.normpath(path) != path:
        return "whose path is not an absolute, normal path"
    kind, copy = r.get("kind"), r.get("copy")
    if kind not in _KINDS:
        return f"for {path} of an unknown kind"
    if (copy is None) != (kind == "absent") or (copy is not None and not (isinstance(copy, str) and _COPY.fullmatch(copy))):
        return f"for {path} whose saved copy is not a name the journal makes"
    mode, size, digest, after = r.get("mode"), r.get("size"), r.get("digest"), r.get("after")
    if not (mode is None or (_is(mode, int) and 0 <= mode <= 0o7777)) or not (_is(size, int) and size >= 0):
        return f"for {path} whose mode or size is out of range"
    if (digest is None) != (copy is None) or (digest is not None and not (isinstance(digest, str) and _HEX.fullmatch(digest))):
        return f"for {path} without the digest of its saved copy"
    if not (isinstance(after, str) and (after == journal_restore.ABSENT or _HEX.fullmatch(after))):
        return f"for {path} without the digest of what the change left"
    return None


def _is(value: Any, types: type | tuple[type, ...]) -> bool:
    return isinstance(value, types) and not isinstance(value, bool)


def _is_time(value: Any) -> bool:
    # Seconds since the epoch that list_changes can show as a date (not NaN, not infinite).
    return _is(value, (int, float)) and 0 <= value < 1e11


def _open_below(top: Path, names: list[str], flags: int) -> int:
    """``top/names...`` opened one name at a time from ``top``'s descriptor, no link followed."""
    fd = os.open(top, dirfd.LIST)
    try:
        for name in names[:-1]:
            below = os.open(name, dirfd.LIST, dir_fd=fd)
            os.close(fd)
            fd = below
        return os.open(names[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _digest_or_none(conf: Any, p: ResolvedPath) -> str | None:
    try:
        return journal_restore.digest(conf, p)
    except (OSError, ToolError):
        return None  # unreachable now (a link to outside on the way): changed, as far as we know


def _lstat(conf: Any, p: ResolvedPath) -> os.stat_result | None:
    try:
        with conf.at(p) as place:
            return dirfd.lstat(place.fd, place.name)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _gone(conf: Any, p: ResolvedPath) -> bool:
    """Whether nothing is at ``p`` now (one out of reach is not known to be gone)."""
    try:
        return _lstat(conf, p) is None
    except (OSError, ToolError):
        return False


def _under(path: Path, top: Path) -> bool:
    return path == top or path.is_relative_to(top)


def _entries(changes: Path) -> list[tuple[int, int, str]]:
    found = []
    for name in os.listdir(changes):
        number, _, size = name.partition("-")
        if number.isdigit() and size.isdigit():
            found.append((int(number), int(size), name))
    return found


_JSON_TMP = re.compile(r"\.(meta|intent)\.json\.[0-9a-f]{8}")


def _write_json(path: Path, value: Any, *, durable: bool = False) -> None:
    # Renamed into place whole. A ``meta.json`` is not fsynced: a journal entry costs no disk
    # flush (8 ms here), and a power loss that loses it leaves its intent to the next start.
    # An intent is (``durable``): it must be on disk before the write it announces.
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        data = json.dumps(value).encode()
        while data:
            data = data[os.write(fd, data) :]
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)


def _rmtree(path: Path) -> None:
    fd = os.open(path.parent, dirfd.LIST)
    try:
        dirfd.remove_tree(fd, path.name)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)
