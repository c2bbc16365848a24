"""One-shot checks: `since`, and what changed between two calls on the same path."""

from __future__ import annotations

import time

import fsmcp_watch.hooks
import pytest

from fsmcp.run.host import HostError
from fsmcp.testing import host_for

pytestmark = pytest.mark.anyio

EVERY_EVENT = ["change", "create", "rename", "delete"]


def ms(seconds: float) -> float:
    return seconds * 1000


async def test_since_reports_files_modified_at_or_after_it(session, root, aged):
    (root / "old.txt").write_text("old")
    (root / "new.txt").write_text("new")
    (root / "sub").mkdir()
    aged(root / "old.txt")
    async with session() as s:
        text = await s.watch(root, since=ms(time.time() - 60))
    assert text == f"change {root}/new.txt"


async def test_default_since_is_one_second_ago_on_the_first_call(session, root, aged):
    (root / "old.txt").write_text("old")
    aged(root / "old.txt")
    async with session() as s:
        assert await s.watch(root) == "(no changes)"
    (root / "fresh.txt").write_text("fresh")
    async with session() as s:  # a new server: a first call again
        assert await s.watch(root) == f"change {root}/fresh.txt"


async def test_since_zero_reports_every_file_once_per_call(session, root):
    (root / "a.txt").write_text("a")
    async with session() as s:
        assert await s.watch(root, since=0) == f"change {root}/a.txt"
        assert await s.watch(root, since=0) == f"change {root}/a.txt"
        # Without since, a later call reports only what differs from the previous call's view.
        assert await s.watch(root) == "(no changes)"


@pytest.mark.parametrize("with_since", [False, True], ids=["baseline", "baseline+since"])
async def test_create_change_delete_rename_between_calls(session, root, aged, elsewhere, with_since):
    for name in ("keep.txt", "gone.txt", "old-name.txt", "still.txt"):
        (root / name).write_text(name)
        aged(root / name)
    async with session() as s:
        assert await s.watch(root, events=EVERY_EVENT) == "(no changes)"
        await elsewhere(
            f"write:{root}/new.txt:new",
            f"write:{root}/keep.txt:longer than before",
            f"delete:{root}/gone.txt",
            f"rename:{root}/old-name.txt:{root}/new-name.txt",
        )
        args = {"since": ms(time.time() - 3600 + 60)} if with_since else {}
        text = await s.watch(root, events=EVERY_EVENT, **args)
        assert text.splitlines() == [
            f"delete {root}/gone.txt",
            f"change {root}/keep.txt",
            f"rename {root}/old-name.txt -> {root}/new-name.txt",
            f"create {root}/new.txt",
        ]
        assert await s.watch(root, events=EVERY_EVENT) == "(no changes)"


async def test_events_choose_what_is_reported_and_the_rest_waits_for_its_turn(session, root, aged):
    (root / "a.txt").write_text("a")
    (root / "b.txt").write_text("b")
    aged(root / "a.txt")
    aged(root / "b.txt")
    async with session() as s:
        await s.watch(root, events=EVERY_EVENT)
        (root / "a.txt").unlink()
        (root / "c.txt").write_text("c")
        (root / "b.txt").write_text("bigger")
        assert await s.watch(root) == f"change {root}/b.txt"  # the default: change only
        assert await s.watch(root, events=["delete"]) == f"delete {root}/a.txt"
        # Not yet shown to anyone, the create is still there for the call that asks for it.
        assert await s.watch(root, events=["create", "delete"]) == f"create {root}/c.txt"
        assert await s.watch(root, events=EVERY_EVENT) == "(no changes)"


async def test_replacing_a_file_by_rename_is_a_change(session, root, aged):
    (root / "doc.txt").write_text("v1")
    aged(root / "doc.txt")
    async with session() as s:
        await s.watch(root, events=EVERY_EVENT)
        (root / ".doc.txt.tmp").write_text("v2")
        (root / ".doc.txt.tmp").rename(root / "doc.txt")  # an editor's atomic save
        assert await s.watch(root, events=EVERY_EVENT) == f"change {root}/doc.txt"


async def test_recursive_sees_the_whole_tree_and_not_recursive_only_direct_entries(session, root, aged):
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "x.txt").write_text("x")
    aged(root / "sub" / "deep" / "x.txt")
    async with session() as s:
        await s.watch(root, events=EVERY_EVENT)
        await s.watch(root, events=EVERY_EVENT, recursive=True)
        (root / "sub" / "deep" / "x.txt").write_text("changed")
        (root / "sub" / "y.txt").write_text("y")
        (root / "top.txt").write_text("top")
        assert await s.watch(root, events=EVERY_EVENT) == f"create {root}/top.txt"
        assert (await s.watch(root, events=EVERY_EVENT, recursive=True)).splitlines() == [
            f"change {root}/sub/deep/x.txt",
            f"create {root}/sub/y.txt",
            f"create {root}/top.txt",
        ]


async def test_a_moved_or_deleted_directory_is_one_event(session, root, aged):
    for name in ("d/a.txt", "d/e/b.txt", "gone/c.txt", "gone/f/g.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
        aged(root / name)
    async with session() as s:
        await s.watch(root, events=EVERY_EVENT, recursive=True)
        (root / "d").rename(root / "moved")
        for name in ("gone/f/g.txt", "gone/c.txt"):
            (root / name).unlink()
        (root / "gone" / "f").rmdir()
        (root / "gone").rmdir()
        assert (await s.watch(root, events=EVERY_EVENT, recursive=True)).splitlines() == [
            f"delete {root}/gone",
            f"rename {root}/d -> {root}/moved",
        ]


async def test_a_watched_file_changed_renamed_and_deleted(session, root, aged):
    target = root / "notes.txt"
    target.write_text("v1")
    aged(target)
    async with session() as s:
        assert await s.watch(target, events=EVERY_EVENT) == "(no changes)"
        target.write_text("version 2")
        assert await s.watch(target, events=EVERY_EVENT) == f"change {target}"
        target.rename(root / "renamed.txt")
        assert await s.watch(target, events=EVERY_EVENT) == f"rename {target} -> {root}/renamed.txt"
        await s.fail("NOT_FOUND", target)

        watched = root / "renamed.txt"
        await s.watch(watched, events=EVERY_EVENT)
        watched.unlink()
        assert await s.watch(watched, events=EVERY_EVENT) == f"delete {watched}"


async def test_a_vanished_path_is_kept_until_its_delete_is_asked_for(session, root):
    (root / "d").mkdir()
    async with session() as s:
        await s.watch(root / "d")
        (root / "d").rmdir()
        assert await s.watch(root / "d") == f'(no changes)\n[{root}/d no longer exists; pass events ["delete", "rename"] to have that reported]'
        assert await s.watch(root / "d", events=["delete"]) == f"delete {root}/d"


async def test_a_path_that_does_not_exist_is_not_found(session, root):
    async with session() as s:
        text = await s.fail("NOT_FOUND", root / "missing")
    assert 'watch its directory with events ["create"]' in text


async def test_relative_paths_resolve_against_the_workspace(session, root, aged):
    (root / "a.txt").write_text("a")
    aged(root / "a.txt")
    async with session() as s:
        await s.watch(".", events=EVERY_EVENT)
        (root / "b.txt").write_text("b")
        assert await s.watch(".", events=EVERY_EVENT) == f"create {root}/b.txt"


async def test_the_data_holds_the_same_facts(session, root, aged):
    (root / "a.txt").write_text("a")
    aged(root / "a.txt")
    async with session(format="json") as s:
        first = await s.data(root, events=EVERY_EVENT)
        assert first == {"path": str(root), "events": [], "more": 0, "engine": None}
        (root / "a.txt").rename(root / "b.txt")
        (root / "c.txt").write_text("c")
        data = await s.data(root, events=EVERY_EVENT)
    assert data["events"] == [
        {"event": "rename", "path": f"{root}/b.txt", "from": f"{root}/a.txt"},
        {"event": "create", "path": f"{root}/c.txt"},
    ]


async def test_output_past_the_budget_is_held_back_for_the_next_call(session, root):
    async with session(budget=2000) as s:
        await s.watch(root, events=["create"])
        names = [f"file-with-a-long-name-{n:03}.txt" for n in range(80)]
        for name in names:
            (root / name).write_text("x")
        seen: list[str] = []
        texts = []
        while (text := await s.watch(root, events=["create"])) != "(no changes)":
            texts.append(text)
            seen += [line for line in text.splitlines() if line.startswith("create ")]
    assert len(texts) > 1 and all(len(t) <= 2000 for t in texts)
    assert "more events not shown (output budget 2,000 characters); call watch_file again on this path" in texts[0]
    assert seen == [f"create {root}/{name}" for name in names]


async def test_more_entries_than_the_limit_is_refused(session, root):
    for n in range(6):
        (root / f"f{n}").write_text("x")
    async with session(max_entries=5) as s:
        text = await s.fail("FILE_TOO_LARGE", root)
        assert "more than 5 entries" in text and "watch a subdirectory" in text
        (root / "f5").unlink()
        assert await s.watch(root, since=0, events=["delete"]) == "(no changes)"


async def test_bad_arguments_are_refused(session, root):
    async with session() as s:
        await s.fail("INVALID_PARAMS", root, events=["modify"])
        await s.fail("INVALID_PARAMS", root, events=[])
        await s.fail("INVALID_PARAMS", root, waitSeconds=301)
        await s.fail("INVALID_PARAMS", root, since=-1)
        await s.fail("INVALID_PARAMS", root, interval=5)


async def test_a_bad_option_stops_the_start_naming_the_setting(root):
    with pytest.raises(HostError) as info:
        host_for([root], [("watch", fsmcp_watch.hooks)], plugins={"watch": {"engine": "inotify"}})
    assert "[plugins.watch]" in str(info.value) and "engine must be one of auto, notify, poll" in str(info.value)


async def test_an_explicit_since_leaves_out_files_older_than_it_whatever_the_baseline_says(session, root, aged):
    # The baseline remembers the directory empty; the file then arrives an hour old (cp -p, a restore).
    async with session() as s:
        assert await s.watch(root, events=EVERY_EVENT) == "(no changes)"
        (root / "old.txt").write_text("restored")
        aged(root / "old.txt")
        (root / "new.txt").write_text("fresh")
        assert await s.watch(root, events=EVERY_EVENT, since=ms(time.time() - 60)) == f"create {root}/new.txt"


async def test_a_file_made_after_since_is_a_create_on_the_first_call(session, root, aged):
    (root / "before.txt").write_text("old")
    since = ms(time.time())
    time.sleep(0.05)  # birth times on either side of since, whatever the clock's grain
    (root / "before.txt").write_text("changed")
    (root / "made.txt").write_text("new")
    async with session() as s:
        assert await s.watch(root, events=["create"], since=since) == f"create {root}/made.txt"
    async with session() as s:
        text = await s.watch(root, events=EVERY_EVENT, since=since)
    assert text.splitlines() == [f"change {root}/before.txt", f"create {root}/made.txt"]
