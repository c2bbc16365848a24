"""Events between two states of a watched path, and the baseline that a report leaves behind."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from .scan import Meta

Entries = dict[str, Meta]


@dataclass(frozen=True)
class Event:
    """``path`` is relative to the watched path (``""`` is the path itself); for a rename, the new name."""

    kind: str
    path: str
    old: str | None = None


def compare(before: Entries, after: Entries) -> list[Event]:
    """What happened between two states. A rename is the same inode under a new name."""
    gone = {rel: m for rel, m in before.items() if rel not in after or not after[rel].same_object(m)}
    appeared = {rel: m for rel, m in after.items() if rel not in before or not before[rel].same_object(m)}
    by_object: dict[tuple[int, int, str], list[str]] = {}
    for rel, m in gone.items():
        by_object.setdefault((m.dev, m.ino, m.kind), []).append(rel)
    renamed: dict[str, str] = {}
    events: list[Event] = []
    for rel in sorted(appeared):  # a directory before its entries, so their renames follow from its
        m = appeared[rel]
        old = _origin(rel, m, by_object.get((m.dev, m.ino, m.kind), []), before, renamed)
        if old is not None:
            renamed[old] = rel
            events.append(Event("rename", rel, old))
            if _content_differs(before[old], m):
                events.append(Event("change", rel))
        else:
            # The same name on a new inode is a replacement, as an editor's atomic save makes.
            events.append(Event("change" if rel in before else "create", rel))
    events += [Event("delete", rel) for rel in gone if rel not in after and rel not in renamed]
    for rel, m in after.items():
        old_meta = before.get(rel)
        if old_meta is not None and old_meta.same_object(m) and _content_differs(old_meta, m):
            events.append(Event("change", rel))
    return _collapse(events)


def _origin(rel: str, meta: Meta, candidates: list[str], before: Entries, renamed: dict[str, str]) -> str | None:
    """The vanished name that ``rel`` is, if any.

    File systems give a deleted file's inode number to the next new file at once, so a file
    counts as renamed only with its size and mtime unchanged (a rename keeps both), or when it
    moved with a renamed directory. A directory's mtime moves with its entries: its inode decides.
    """
    for old in candidates:
        if old in renamed:
            continue
        was = before[old]
        if meta.kind == "directory" or (was.size, was.mtime_ns) == (meta.size, meta.mtime_ns) or _moved_along(old, rel, renamed):
            return old
    return None


def _moved_along(old: str, new: str, renamed: dict[str, str]) -> bool:
    for ancestor in reversed(_ancestors(old)):
        if ancestor in renamed:
            return renamed[ancestor] + old[len(ancestor) :] == new
    return False


def modified_since(after: Entries, since_ns: int, reported: set[str], born: Callable[[str], int | None] | None) -> list[Event]:
    """The one-shot check ``since`` asks for: every non-directory modified at or after it, as a change.

    With ``born`` (the caller asks for creates), one made at or after ``since`` is a create.
    Without it (creates not asked for), a new file is reported as a change.
    """
    events = []
    for rel, m in after.items():
        if m.kind != "directory" and m.mtime_ns >= since_ns and rel not in reported:
            made = born(rel) if born is not None else None
            events.append(Event("create" if made is not None and made >= since_ns else "change", rel))
    return events


def by_time(events: list[Event], after: Entries, since_ns: int) -> list[Event]:
    """The events a file's mtime places at or after ``since``; deletes and renames have no such time."""
    return [e for e in events if e.kind in ("delete", "rename") or e.path not in after or after[e.path].kind == "directory" or after[e.path].mtime_ns >= since_ns]


def ordered(events: list[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (e.path, e.kind))


def carry(before: Entries, after: Entries, withheld: list[Event]) -> Entries:
    """The next baseline: ``after``, but with every withheld event undone, so the next call reports it."""
    state = dict(after)
    after_keys, before_keys = sorted(after), sorted(before)
    for e in withheld:
        if e.kind != "delete":
            for key in _subtree(after_keys, e.path):
                state.pop(key, None)
        source = e.old if e.kind == "rename" else None if e.kind == "create" else e.path
        if source is not None:
            for key in _subtree(before_keys, source):
                state[key] = before[key]
    return state


def _content_differs(old: Meta, new: Meta) -> bool:
    # A directory's mtime moves with its entries, which are reported themselves.
    return new.kind != "directory" and (old.size, old.mtime_ns) != (new.size, new.mtime_ns)


def _collapse(events: list[Event]) -> list[Event]:
    """Leave out what a directory's own delete or rename already says about everything under it."""
    deleted = {e.path for e in events if e.kind == "delete"}
    renamed = {e.old: e.path for e in events if e.kind == "rename"}

    def implied(e: Event) -> bool:
        if e.kind == "delete":
            return any(a in deleted for a in _ancestors(e.path))
        if e.kind == "rename":
            assert e.old is not None
            return any(a in renamed and e.path == renamed[a] + e.old[len(a) :] for a in _ancestors(e.old))
        return False

    return [e for e in events if not implied(e)]


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def _subtree(keys: list[str], rel: str) -> list[str]:
    """``rel`` and every key under it, from sorted ``keys``."""
    if rel == "":
        return [""] if keys and keys[0] == "" else []
    found = [rel] if (i := bisect_left(keys, rel)) < len(keys) and keys[i] == rel else []
    # Keys under rel/ sort together, between "rel/" and "rel0" ("0" follows "/").
    start, end = bisect_left(keys, rel + "/"), bisect_left(keys, rel + "0")
    return found + keys[start:end]
