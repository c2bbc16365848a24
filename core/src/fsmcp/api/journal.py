"""The change journal as a tool reads it (``ctx.journal``): typed entries, this server's only.

The journal keeps each change as a ``meta.json`` it checked on reading (:mod:`fsmcp.builtin.journal`);
this view turns those into frozen records, so that a tool (the history plugin's
``list_changes``, ``undo_change``) never reads the journal's JSON itself, and leaves out the
changes another server sharing the journal made outside this one's roots.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..paths.fs import FileSystem
    from ..builtin.journal import Journal
    from ..paths.roots import RootSet

_INTERRUPTED = ("kept", "rolled back")
"""What the journal's start did with a call cut short; ``meta.json`` is untrusted, anything else is None."""


@dataclass(frozen=True)
class JournalRecord:
    """One path as a change found it, before its first write."""

    path: str
    """The path's real path."""
    kind: str
    """What was there: ``file``, ``directory``, ``symlink`` or ``absent``."""


@dataclass(frozen=True)
class JournalEntry:
    """One change kept in the journal: what one tool call changed."""

    id: int
    tool: str
    """The tool called (a batch's steps are its batch's change)."""
    time: float
    """When the call began, in seconds since the epoch."""
    session: str | None
    """The id of the client session that made it; None for a change kept before changes recorded one."""
    paths: tuple[str, ...]
    """The paths it changed, as shown, in order (a staging path that came and went left out)."""
    records: tuple[JournalRecord, ...]
    """What each path it changed was before, as saved for an undo."""
    reason: str | None
    """Why it cannot be undone (its copies were given up), or None."""
    undoes: int | None
    """The id of the change this one undid, when it is an undo."""
    undone: float | None
    """When it was undone, or None."""
    interrupted: str | None
    """``kept`` or ``rolled back`` when its server stopped mid-call and the next start did that; else None."""

    @property
    def undoable(self) -> bool:
        return not self.reason


class JournalView:
    """The host's change journal as one call sees it: this server's changes, undone as a change of this call."""

    __slots__ = ("_journal", "_fs", "_roots", "session")

    def __init__(self, journal: Journal, fs: FileSystem, roots: RootSet, session: str):
        self._journal = journal
        self._fs = fs
        self._roots = roots
        self.session = session
        """The id of the client session this call belongs to (an entry's ``session`` when this session made it)."""

    def changes(self) -> Iterator[JournalEntry]:
        """Every change kept that this client may see, newest first (damaged ones left out), with
        only the paths it may see: a change that also touched paths outside its roots (the
        operator's, narrowed by its MCP roots) is listed without them."""
        for meta in self._journal.changes():
            if self._visible(meta):
                yield _entry(meta, self._seen)

    def undo(self, id: int | None, *, force: bool = False) -> tuple[JournalEntry, list[str]]:
        """Put back what change ``id`` replaced (default: this session's latest not undone).

        Returns the change undone and the paths restored, as shown. Raises ``NOT_FOUND`` when
        there is no such change (or none of this session's), ``INVALID_PARAMS`` when it is undone
        already or cannot be undone, ``EDIT_CONFLICT`` when a path changed since, unless ``force``:
        nothing is restored then.
        """
        meta, paths = self._journal.undo(self._fs, id, force, self._visible, self.session, self._whole)
        return _entry(meta, self._seen), paths

    def _seen(self, path: str) -> bool:
        return self._roots.containing(Path(path)) is not None

    def _visible(self, meta: dict[str, Any]) -> bool:
        # A journal may be shared by servers over other roots, a client narrowed by its MCP roots
        # sees less than its server: each sees only the changes that touched its own roots.
        return any(self._seen(r["path"]) for r in meta["records"]) or any(self._seen(p) for p in meta["paths"])

    def _whole(self, meta: dict[str, Any]) -> bool:
        # A change is undone whole or not at all: by a client that may see every path it touched.
        return all(self._seen(r["path"]) for r in meta["records"]) and all(self._seen(p) for p in meta["paths"])


def _entry(meta: dict[str, Any], seen: Callable[[str], bool]) -> JournalEntry:
    """A ``meta.json`` the journal checked (:meth:`fsmcp.builtin.journal.Journal.changes`), with its id, as a
    record of the paths ``seen`` keeps (those the client may see)."""
    interrupted = meta.get("interrupted")
    return JournalEntry(
        id=meta["id"],
        tool=meta["tool"],
        time=meta["time"],
        session=meta["session"],
        paths=tuple(p for p in meta["paths"] if seen(p)),
        records=tuple(JournalRecord(r["path"], r["kind"]) for r in meta["records"] if seen(r["path"])),
        reason=meta["reason"],
        undoes=meta.get("undoes"),
        undone=meta["undone"],
        interrupted=interrupted if interrupted in _INTERRUPTED else None,
    )
