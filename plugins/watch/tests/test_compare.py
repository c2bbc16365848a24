"""The comparison of two states, on states written out by hand: cases a real file system makes rarely on cue."""

from __future__ import annotations

from fsmcp_watch.baselines import Baselines
from fsmcp_watch.changes import Event, carry, compare, ordered
from fsmcp_watch.scan import Meta


def file(ino: int, size: int = 1, mtime: int = 100) -> Meta:
    return Meta("file", 1, ino, size, mtime)


def directory(ino: int, mtime: int = 100) -> Meta:
    return Meta("directory", 1, ino, 4096, mtime)


def events(before: dict, after: dict) -> list[tuple[str, str, str | None]]:
    return [(e.kind, e.path, e.old) for e in ordered(compare({"": directory(1), **before}, {"": directory(1), **after}))]


def test_a_reused_inode_number_is_not_a_rename():
    # The file system handed the deleted file's inode to the new one, which has its own content.
    assert events({"a.txt": file(7)}, {"b.txt": file(7, size=5, mtime=200)}) == [
        ("delete", "a.txt", None),
        ("create", "b.txt", None),
    ]


def test_a_rename_keeps_size_and_mtime():
    assert events({"a.txt": file(7)}, {"b.txt": file(7)}) == [("rename", "b.txt", "a.txt")]


def test_two_names_swapped():
    before = {"a": file(1), "c": file(3)}
    after = {"a": file(3), "b": file(1)}
    assert events(before, after) == [("rename", "a", "c"), ("rename", "b", "a")]


def test_a_renamed_directory_then_changed_is_one_rename_and_the_changes():
    before = {"d": directory(5), "d/sub": directory(6), "d/sub/x": file(7), "d/y": file(8)}
    after = {"e": directory(5, mtime=300), "e/sub": directory(6, mtime=300), "e/sub/x": file(7, size=9, mtime=300), "e/sub/new": file(9), "e/y": file(8)}
    assert events(before, after) == [
        ("rename", "e", "d"),
        ("create", "e/sub/new", None),
        ("change", "e/sub/x", None),
    ]


def test_a_deleted_tree_is_one_delete():
    before = {"d": directory(5), "d/sub": directory(6), "d/sub/x": file(7), "keep": file(8)}
    assert events(before, {"keep": file(8)}) == [("delete", "d", None)]


def test_the_same_name_on_a_new_inode_is_a_change():
    assert events({"doc": file(1)}, {"doc": file(2, size=3)}) == [("change", "doc", None)]


def test_a_directory_whose_entries_changed_is_not_itself_reported():
    assert events({"d": directory(5), "d/x": file(7)}, {"d": directory(5, mtime=200), "d/x": file(7), "d/y": file(8)}) == [
        ("create", "d/y", None)
    ]


def test_withheld_events_stay_in_the_baseline_for_the_next_call():
    before = {"": directory(1), "a": file(1), "d": directory(2), "d/x": file(3), "gone": file(4)}
    after = {"": directory(1), "b": file(1), "d": directory(2), "d/x": file(3, size=2), "new": file(5)}
    found = ordered(compare(before, after))
    assert [(e.kind, e.path) for e in found] == [("rename", "b"), ("change", "d/x"), ("delete", "gone"), ("create", "new")]
    withheld = found[1:]  # only the rename was shown
    baseline = carry(before, after, withheld)
    assert baseline == {"": directory(1), "b": file(1), "d": directory(2), "d/x": file(3), "gone": file(4)}
    assert ordered(compare(baseline, after)) == withheld


def test_withholding_a_directory_rename_puts_its_whole_tree_back():
    before = {"": directory(1), "d": directory(2), "d/x": file(3)}
    after = {"": directory(1), "e": directory(2), "e/x": file(3)}
    found = compare(before, after)
    assert found == [Event("rename", "e", "d")]
    assert carry(before, after, found) == before


def test_baselines_keep_within_their_entry_limit_dropping_the_least_recently_used():
    store = Baselines()
    store.put(("/a", False), {"": file(1), "x": file(2)}, limit=8)  # 3 entries held
    store.put(("/b", False), {"": file(3), "y": file(4)}, limit=8)  # 6
    assert store.get(("/a", False)) is not None  # /a is now the most recently used
    store.put(("/c", False), {"": file(5)}, limit=8)  # 8
    store.put(("/d", False), {"": file(6)}, limit=8)  # 10: /b goes first
    assert store.get(("/b", False)) is None
    assert store.get(("/a", False)) is not None and store.get(("/d", False)) is not None
    store.put(("/big", True), {str(n): file(n) for n in range(20)}, limit=8)
    assert store.get(("/big", True)) is not None  # the newest one stays, whatever its size
    assert store.get(("/a", False)) is None and store.get(("/c", False)) is None
