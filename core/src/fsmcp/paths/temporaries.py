"""The server's temporary names inside the roots, and removing those of a server that died.

Each temporary name is written to the process's ledger (held under ``flock`` for the process's
life) before it is made, and completed once it is gone; the next start (:func:`sweep`) removes
what a dead process's ledger lists, where the name is still what was recorded: the rules, the
ledger's place and their cost are in docs/security.md ("Nothing left behind after a crash") and
docs/threat-model.md. Lines are appended with one ``write`` and not fsynced: a process's death
loses nothing the kernel has. The ledger is emptied when nothing is pending and it has grown
past 64 KiB, and rewritten with the pending lines alone past 1 MiB.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import json
import logging
import os
import re
import stat as stat_mod
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import dirfd, locks, state
from .roots import RootSet
from .state import private_dir
from ..api.config import Settings
from ..api.jsontext import too_deep

log = logging.getLogger("fsmcp.temporaries")

NAME = re.compile(r"\..*\.[0-9a-f]{12}\.fsmcp-tmp\Z", re.S)
"""What :func:`temp_name` makes; nothing else is ever removed."""
_TEMP_MARK = ".fsmcp-tmp"
_NAME_MAX = 255
_SUFFIX = ".ledger"
_EMPTY_AT = 64 << 10
_COMPACT_AT = 1 << 20
_READ_AT_MOST = 64 << 20


def temp_name(name: str) -> str:
    """A fresh name beside ``name`` for a file being made: ``.{name}.{12 hex}.fsmcp-tmp``.

    The name is shortened (in bytes, from its end) so the temporary name is never longer than
    NAME_MAX: a target whose own name fits always gets a temporary file that fits too. The mark
    at the end stays whole, so anything that recognises temporary files still does.
    """
    tail = f".{os.urandom(6).hex()}{_TEMP_MARK}"
    raw = os.fsencode(name)[: _NAME_MAX - 1 - len(tail)]
    return f".{os.fsdecode(raw)}{tail}"


def place(journal: Path | None = None) -> Path:
    """Where the ledgers live: ``temporaries`` in the journal's directory (checked at start as
    the journal is), else ``$XDG_STATE_HOME/fsmcp/temporaries`` (the XDG rule for the default)."""
    return journal / "temporaries" if journal is not None else state.state_home() / "fsmcp" / "temporaries"


def prepare(roots: Iterable[Path], journal: Path | None = None) -> Path:
    """Check the ledgers' place (outside every root, this user's alone) and make it; ValueError says what to fix.

    A ledger tells the next start what to delete: a client that could write one through a
    root, or another user who could write the place, would choose what a start deletes."""
    real = Path(os.path.realpath(place(journal)))
    fix = "set XDG_STATE_HOME to a directory of this user's outside every root" if journal is None else "set journal = DIR outside every root"
    what = "the ledger of the server's temporary files"
    state.apart(real, roots, what, fix, "a client could write a ledger and choose what a start deletes")
    private_dir(real, what, fix, "choose what a start deletes")
    return real


class Ledger:
    """This process's ledger: opened (and locked) at the first temporary name, kept until exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._path: Path | None = None
        self._ids = itertools.count(1)
        self._live: dict[int, list[bytes]] = {}
        self._size = 0
        self.directory: Path | None = None

    def note(self, record: dict[str, Any] | str) -> int:
        """Write ``record`` down before what it names exists; its id for :meth:`made` and :meth:`done`.

        A string is the record's JSON members already written out (the hot path's, :func:`temporary`)."""
        with self._lock:
            number = next(self._ids)
            if isinstance(record, str):
                self._append(number, f'{{"id":{number},{record}}}')
            else:
                self._append(number, _encode({"id": number, **record}))
            return number

    def made(self, number: int, dir_fd: int, name: str) -> None:
        """What ``name`` turned out to be: removed later only if it is still that very file."""
        i = _identity(dir_fd, name)
        born = "null" if i["born"] is None else i["born"]
        with self._lock:
            self._append(number, f'{{"id":{number},"dev":{i["dev"]},"ino":{i["ino"]},"fmt":{i["fmt"]},"born":{born}}}')

    def done(self, *numbers: int) -> None:
        """The names are gone (renamed into place or removed): nothing to do for them after a crash."""
        with self._lock:
            for number in numbers:
                self._live.pop(number, None)
            if self._fd is None:
                return
            if not self._live and self._size > _EMPTY_AT:
                # Emptied now and then, not at every call: a truncation costs a file system
                # transaction, an appended line a copy into the page cache.
                os.ftruncate(self._fd, 0)
                self._size = 0
                return
            self._write(b"".join(b'{"id":%d,"done":true}\n' % number for number in numbers))
            if self._size > _COMPACT_AT:
                self._compact()

    def _append(self, number: int, record: str) -> None:
        line = (record + "\n").encode()
        if self._fd is None:
            self._fd, self._path = _new_ledger(self.directory or prepare(()))
        self._write(line)
        self._live.setdefault(number, []).append(line)

    def _write(self, line: bytes) -> None:
        assert self._fd is not None
        os.write(self._fd, line)  # O_APPEND, one write: a line is whole or absent
        self._size += len(line)

    def _compact(self) -> None:
        """A new ledger with the pending lines only; the old one goes once the new one is written."""
        assert self._fd is not None and self._path is not None
        fd, path = _new_ledger(self._path.parent)
        data = b"".join(line for lines in self._live.values() for line in lines)
        os.write(fd, data)
        old_fd, old_path = self._fd, self._path
        self._fd, self._path, self._size = fd, path, len(data)
        os.unlink(old_path)
        os.close(old_fd)


LEDGER = Ledger()
_encode = json.JSONEncoder(separators=(",", ":")).encode
_string = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]  # C, escapes lone surrogates too


def _new_ledger(directory: Path) -> tuple[int, Path]:
    """A ledger file locked before it has its name, so that no sweep takes it for a dead one's."""
    for _ in range(10):
        stem = f"{os.getpid()}-{os.urandom(6).hex()}"
        fresh = directory / f".new-{stem}"
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            os.rename(fresh, directory / f"{stem}{_SUFFIX}")
        except FileNotFoundError:  # a sweep took the unnamed file for a dead process's
            os.close(fd)
            continue
        return fd, directory / f"{stem}{_SUFFIX}"
    raise OSError(errno.EAGAIN, "no ledger for temporary files could be made", str(directory))


# -- what the host's primitives call ------------------------------------------------------------


def where(dir_fd: int) -> dict[str, Any]:
    """A directory as a ledger names it: its path, device and inode."""
    st = os.fstat(dir_fd)
    return {"dir": _path_of(dir_fd), "ddev": st.st_dev, "dino": st.st_ino}


def _path_of(dir_fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{dir_fd}")
    except OSError:  # no /proc: the write goes on; what a crash leaves here is not found again
        return ""


def _identity(dir_fd: int, name: str) -> dict[str, Any]:
    """What tells a file from one made later under its name: an inode number is reused at once,
    a birth time is not (where the file system keeps one)."""
    st = dirfd.lstat(dir_fd, name)
    return {"dev": st.st_dev, "ino": st.st_ino, "fmt": stat_mod.S_IFMT(st.st_mode), "born": dirfd.birth_ns(dir_fd, name)}


@contextmanager
def temporary(dir_fd: int, name: str) -> Iterator[int]:
    """Around the life of a temporary ``name`` in ``dir_fd``: noted before, done after.

    The caller reports what it made with ``LEDGER.made(number, dir_fd, name)`` and removes or renames
    the name itself, failure included; a process killed inside the block leaves the note."""
    st = os.fstat(dir_fd)
    number = LEDGER.note(f'"t":"tmp","dir":{_string(_path_of(dir_fd))},"ddev":{st.st_dev},"dino":{st.st_ino},"name":{_string(name)}')
    try:
        yield number
    finally:
        LEDGER.done(number)


def set_aside(dir_fd: int, name: str, temp: str, *, restore: bool) -> int:
    """Rename ``name`` to ``temp``, noted first; the number :meth:`Ledger.done` takes once ``temp`` is gone.

    After a crash ``temp`` is put back where ``name`` is empty again (``restore``: what was
    set aside to be replaced) or removed (what was set aside to be deleted)."""
    number = LEDGER.note({"t": "aside" if restore else "drop", **where(dir_fd), "name": temp, "from": name, **_identity(dir_fd, name)})
    try:
        os.rename(name, temp, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        LEDGER.done(number)
        raise
    return number


@contextmanager
def aside(dir_fd: int, name: str, temp: str, *, restore: bool) -> Iterator[None]:
    """:func:`set_aside` for the block, which removes ``temp`` or renames it back."""
    number = set_aside(dir_fd, name, temp, restore=restore)
    try:
        yield
    finally:
        LEDGER.done(number)


def move(src_fd: int, src: str, dst_fd: int, dst: str, staging: int) -> int:
    """A move across file systems about to place the copy ``staging`` (a :func:`temporary`'s number) at ``dst``.

    Once the copy is in place the move is finished after a crash, the source taken away; before,
    the copy is removed and the source stays. Returns the number :meth:`Ledger.done` takes."""
    return LEDGER.note(
        {"t": "move", **where(src_fd), "name": src, **_identity(src_fd, src),
         "to": {**where(dst_fd), "name": dst}, "staging": staging}
    )  # fmt: skip


# -- at start -------------------------------------------------------------------------------------

_swept = False


def sweep(roots: Iterable[Path], journal: Path | None, *, read_only: bool = False) -> None:
    """Check the place, then tidy up after every server that died with temporary names; once per process.

    ``journal``: the journal's directory, None when it is off. ``read_only``: a server that
    changes nothing removes nothing either; the next one that may does."""
    global _swept
    LEDGER.directory = directory = prepare(roots, journal)
    if _swept or read_only:
        return
    _swept = True
    for name in sorted(os.listdir(directory)):
        try:
            fd = os.open(directory / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its process lives
            st = os.fstat(fd)
            if st.st_nlink == 0 or not stat_mod.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                continue
            if name.endswith(_SUFFIX):
                _tidy(name, _records(os.read(fd, _READ_AT_MOST)))
            os.unlink(directory / name)
        except OSError as exc:
            log.warning("the ledger %s of a server that ended could not be read: %s", directory / name, exc)
        finally:
            os.close(fd)


def _records(data: bytes) -> dict[int, dict[str, Any]]:
    """The pending records of a ledger, each merged with what was added to it; untrusted: checked here."""
    pending: dict[int, dict[str, Any]] = {}
    for line in data.split(b"\n"):
        if too_deep(line):
            continue  # not what a ledger holds; a recursive parser would exhaust the stack
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by the crash
        if not isinstance(record, dict) or not isinstance(number := record.get("id"), int):
            continue
        if record.get("done") is True:
            pending.pop(number, None)
        elif "t" in record:
            pending[number] = record
        elif number in pending:
            pending[number].update({k: record.get(k) for k in ("dev", "ino", "fmt", "born")})
    return pending


def _tidy(ledger: str, records: dict[int, dict[str, Any]]) -> None:
    said = []
    # A move whose copy is in place is finished first: the source goes, the copy stays.
    for r in records.values():
        if r.get("t") == "move" and isinstance(r.get("to"), dict) and (staging := records.get(r.get("staging"))):  # type: ignore[arg-type]
            with _directory(r["to"]) as dst:
                placed = dst is not None and _is(dst, r["to"].get("name"), staging)
            if placed:
                with _directory(r) as src:
                    if src is not None and _is(src, r.get("name"), r):
                        _remove(src, r["name"])
                        said.append(f"finished moving {r['dir']}/{r['name']} to {r['to']['dir']}/{r['to']['name']}")
    for r in records.values():
        kind = r.get("t")
        if kind not in ("tmp", "drop", "aside") or not isinstance(r.get("name"), str) or not NAME.fullmatch(r["name"]):
            continue
        try:
            with _directory(r) as fd:
                if fd is None or not _is(fd, r["name"], r, owner=kind == "tmp"):
                    continue
                if kind == "aside" and isinstance(r.get("from"), str) and "/" not in r["from"] and not dirfd.lexists(fd, r["from"]):
                    os.rename(r["name"], r["from"], src_dir_fd=fd, dst_dir_fd=fd)
                    said.append(f"put back {r['dir']}/{r['from']}")
                else:
                    _remove(fd, r["name"])
                    said.append(f"removed {r['dir']}/{r['name']}")
                dirfd.fsync_dir(fd)
        except OSError as exc:  # one record on its own (a name too long, say): the others go on
            said.append(f"could not tidy {r['dir']}/{r['name']} ({exc.strerror or exc})")
    if said:
        log.warning("a server that ended midway (ledger %s) left temporary files: %s", ledger, "; ".join(said))


@contextmanager
def _directory(r: dict[str, Any]) -> Iterator[int | None]:
    """The recorded directory, reached from / without following a link, if it is still the one recorded."""
    path, dev, ino = r.get("dir"), r.get("ddev"), r.get("dino")
    fd = None
    if isinstance(path, str) and path.startswith("/") and isinstance(dev, int) and isinstance(ino, int):
        try:
            fd = os.open("/", dirfd.SEARCH)
            for part in path.split("/"):
                if part in ("", "."):
                    continue
                if part == "..":
                    raise NotADirectoryError(path)
                nxt = os.open(part, dirfd.SEARCH, dir_fd=fd)
                os.close(fd)
                fd = nxt
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (dev, ino):
                raise NotADirectoryError(path)  # another directory now: not the one recorded
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _is(dir_fd: int, name: Any, r: dict[str, Any], *, owner: bool = False) -> bool:
    """Whether ``name`` is what ``r`` recorded: the same file (inode and birth) where recorded;
    ``owner``: made by this user, too."""
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        return False
    try:
        st = dirfd.lstat(dir_fd, name)
    except OSError:
        return False
    if owner and st.st_uid != os.geteuid():
        return False
    if not isinstance(r.get("ino"), int):
        return owner  # noted, killed before it was made: its random name, made by this user
    if (st.st_dev, st.st_ino, stat_mod.S_IFMT(st.st_mode)) != (r.get("dev"), r["ino"], r.get("fmt")):
        return False
    return r.get("born") is None or r["born"] == dirfd.birth_ns(dir_fd, name)


def _remove(dir_fd: int, name: str) -> None:
    try:
        dirfd.remove_tree(dir_fd, name)  # read-only directories inside too
    except OSError as exc:
        log.warning("could not remove a temporary %s: %s", name, exc)


def start(settings: Settings) -> RootSet:
    """The operator's roots (each unusable spec warned about), the journal's place checked, the lock
    directory made, and a killed server's temporaries removed: what every start does once, before
    any call can make temporary names of its own. ValueError says what to change."""
    roots, warnings = RootSet.from_specs(settings.roots, read_only=settings.read_only)
    for warning in warnings:
        logging.getLogger("fsmcp").warning(warning)
    state.prepare(settings, (r.path for r in roots.operator))
    locks.prepare()
    sweep([r.path for r in roots.operator], state.kept(settings), read_only=settings.read_only)
    return roots
