"""The per-path baselines a server keeps between calls, bounded in the entries they hold."""

from __future__ import annotations

from collections import OrderedDict
from weakref import WeakKeyDictionary

from fsmcp import FileSystem

from .changes import Entries

Key = tuple[str, bool]


class Baselines:
    """Least recently used first out, once all baselines together hold more than ``limit`` entries.

    Each baseline counts its entries plus one, so a flood of single-file watches is bounded too.
    """

    def __init__(self) -> None:
        self._saved: OrderedDict[Key, Entries] = OrderedDict()
        self._held = 0

    def get(self, key: Key) -> Entries | None:
        entries = self._saved.get(key)
        if entries is not None:
            self._saved.move_to_end(key)
        return entries

    def put(self, key: Key, entries: Entries, limit: int) -> None:
        self.drop(key)
        self._saved[key] = entries
        self._held += len(entries) + 1
        while self._held > limit and len(self._saved) > 1:
            _, evicted = self._saved.popitem(last=False)
            self._held -= len(evicted) + 1

    def drop(self, key: Key) -> None:
        old = self._saved.pop(key, None)
        if old is not None:
            self._held -= len(old) + 1


# One store per server (its own FileSystem, fs.server: each call's ctx.fs is a new view of it), so
# two servers in one process never share baselines.
_STORES: WeakKeyDictionary[FileSystem, Baselines] = WeakKeyDictionary()


def baselines_for(fs: FileSystem) -> Baselines:
    store = _STORES.get(fs.server)
    if store is None:
        store = _STORES[fs.server] = Baselines()
    return store
