"""waitSeconds: a wait that ends at the next change made by another process, at its timeout, or when cancelled."""

from __future__ import annotations

import os
import time

import anyio
import fsmcp_watch.engines
import pytest
from fsmcp.testing import text_of

pytestmark = pytest.mark.anyio

ENGINES = ["notify", "poll"]


async def wait_while(session_, path, change, **args) -> tuple[str, float, float]:
    """Start a waiting call, make ``change()`` once it waits; the text, the change time, the answer time."""
    out: dict[str, float | str] = {}

    async def waiting() -> None:
        out["text"] = await session_.watch(path, **args)
        out["answered"] = time.time()

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiting)
        await anyio.sleep(0.3)  # the server has looked and is waiting
        out["changed"] = await change()
    return out["text"], out["changed"], out["answered"]  # type: ignore[return-value]


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_wait_ends_within_a_second_of_a_write_by_another_process(session, root, elsewhere, engine):
    (root / "sub").mkdir()
    async with session(engine=engine) as s:
        await s.watch(root)
        text, changed, answered = await wait_while(
            s, root, lambda: elsewhere(f"write:{root}/sub/new.txt:hello"), events=["create"], recursive=True, waitSeconds=30
        )
    assert text == f"create {root}/sub/new.txt"
    assert answered - changed < 1.0


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_wait_sees_renames_and_deletes_by_another_process(session, root, aged, elsewhere, engine):
    for name in ("a.txt", "b.txt"):
        (root / name).write_text(name)
        aged(root / name)
    async with session(engine=engine) as s:
        await s.watch(root, events=["rename", "delete"])
        text, _, _ = await wait_while(
            s, root, lambda: elsewhere(f"rename:{root}/a.txt:{root}/c.txt", f"delete:{root}/b.txt"), events=["rename", "delete"], waitSeconds=30
        )
        if text == f"rename {root}/a.txt -> {root}/c.txt":  # the wait may wake between the two
            text += "\n" + await s.watch(root, events=["rename", "delete"], waitSeconds=30)
    assert text.splitlines() == [f"rename {root}/a.txt -> {root}/c.txt", f"delete {root}/b.txt"] or text.splitlines() == [
        f"delete {root}/b.txt",
        f"rename {root}/a.txt -> {root}/c.txt",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_directory_that_arrives_during_the_wait_is_watched_too(session, root, elsewhere, engine):
    (root / "old-dir" / "inner").mkdir(parents=True)
    async with session(engine=engine) as s:
        await s.watch(root, recursive=True, events=["create"])

        async def changes() -> float:
            await elsewhere(f"rename:{root}/old-dir:{root}/new-dir")  # a rename: not asked for, the wait goes on
            await anyio.sleep(0.3)
            return await elsewhere(f"write:{root}/new-dir/inner/file.txt")

        text, changed, answered = await wait_while(s, root, changes, events=["create"], recursive=True, waitSeconds=30)
        assert text == f"create {root}/new-dir/inner/file.txt"
        assert answered - changed < 1.0
        assert await s.watch(root, recursive=True, events=["rename"]) == f"rename {root}/old-dir -> {root}/new-dir"


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_wait_on_a_file_ignores_its_neighbours(session, root, aged, elsewhere, engine):
    target = root / "watched.txt"
    target.write_text("v1")
    aged(target)
    async with session(engine=engine) as s:
        await s.watch(target)

        async def changes() -> float:
            await elsewhere(f"write:{root}/neighbour.txt:n")
            await anyio.sleep(0.3)
            return await elsewhere(f"write:{target}:version 2")

        text, changed, answered = await wait_while(s, target, changes, waitSeconds=30)
    assert text == f"change {target}"
    assert answered - changed < 1.0


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_wait_returns_no_changes_at_its_timeout(session, root, elsewhere, engine):
    (root / "a.txt").write_text("a")
    async with session(engine=engine) as s:
        await s.watch(root)
        started = time.monotonic()
        assert await s.watch(root, waitSeconds=0.5) == "(no changes)"
        assert time.monotonic() - started >= 0.5
        # A change that is not asked for does not end the wait.
        text, _, _ = await wait_while(s, root, lambda: elsewhere(f"write:{root}/other.txt"), waitSeconds=1)
    assert text == "(no changes)"


@pytest.mark.parametrize("engine", ENGINES)
async def test_what_matches_already_is_answered_without_waiting(session, root, engine):
    (root / "a.txt").write_text("a")
    async with session(engine=engine) as s:
        with anyio.fail_after(60):  # far below the 300 s wait: answered without waiting
            assert await s.watch(root, since=0, waitSeconds=300) == f"change {root}/a.txt"


@pytest.mark.parametrize("engine", ENGINES)
async def test_cancelling_a_wait_ends_it_at_once_and_leaves_nothing_running(
    session, root, elsewhere, plugin_threads, inotify_fds, engine
):
    watchers_before = inotify_fds()
    async with session(engine=engine) as s:
        await s.watch(root)
        scope = anyio.CancelScope()
        outcome: list[object] = []

        async def waiting() -> None:
            with scope:
                outcome.append(await s.client.call_tool("watch_file", {"path": str(root), "waitSeconds": 300}))

        with anyio.fail_after(60):  # far below the 300 s wait: the cancel ended it
            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting)
                await anyio.sleep(0.5)
                assert plugin_threads() or engine == "poll"  # notify: a thread is waiting on the watcher
                scope.cancel()  # the SDK sends notifications/cancelled for the abandoned request
        assert outcome == [] and scope.cancelled_caught

        with anyio.fail_after(60):
            while plugin_threads() or inotify_fds() > watchers_before:
                await anyio.sleep(0.02)
        with anyio.fail_after(60):
            assert await s.watch(root) == "(no changes)"
        # The cancelled call left the baseline as it was: a change since still shows.
        await elsewhere(f"write:{root}/after.txt")
        with anyio.fail_after(60):
            assert await s.watch(root, events=["create"]) == f"create {root}/after.txt"


async def test_a_long_wait_sends_progress(session, root):
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with session(engine="poll") as s:
        await s.watch(root)
        result = await s.client.call_tool("watch_file", {"path": str(root), "waitSeconds": 2.5}, progress_callback=progress)
    assert text_of(result) == "(no changes)"
    assert seen and all(total == 2.5 and message == "waiting for changes" for _, total, message in seen)


async def test_auto_falls_back_to_polling_when_notify_cannot_run(session, root, elsewhere, monkeypatch):
    def unavailable(dirs):
        raise fsmcp_watch.engines.EngineUnavailable("no inotify here")

    monkeypatch.setattr(fsmcp_watch.engines, "_start", unavailable)
    async with session(format="json") as s:
        await s.data(root)
        out: dict = {}

        async def waiting() -> None:
            out["data"] = await s.data(root, events=["create"], waitSeconds=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            await elsewhere(f"write:{root}/new.txt")
    assert out["data"]["engine"] == "poll"
    assert out["data"]["events"] == [{"event": "create", "path": f"{root}/new.txt"}]


async def test_a_notify_engine_that_cannot_run_is_an_error_when_required(session, root, monkeypatch):
    def unavailable(dirs):
        raise fsmcp_watch.engines.EngineUnavailable("no inotify here")

    monkeypatch.setattr(fsmcp_watch.engines, "_start", unavailable)
    async with session(engine="notify") as s:
        text = await s.fail("INTERNAL_ERROR", root, waitSeconds=1)
    assert "no inotify here" in text and 'engine = "auto" or "poll"' in text


async def test_auto_uses_notify_when_it_can(session, root, elsewhere):
    async with session(format="json") as s:
        await s.data(root)
        out: dict = {}

        async def waiting() -> None:
            out["data"] = await s.data(root, events=["create"], waitSeconds=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            await elsewhere(f"write:{root}/new.txt")
    assert out["data"]["engine"] == "notify"


async def test_a_name_notify_cannot_decode_makes_the_wait_poll_on(session, root):
    async with session(format="json") as s:
        await s.data(root)
        out: dict = {}

        async def waiting() -> None:
            out["data"] = await s.data(root, events=["create"], waitSeconds=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            await anyio.Path(os.fsdecode(os.fsencode(root) + b"/bad-\xff.txt")).write_text("x")  # not UTF-8
            await anyio.sleep(0.3)
            (root / "good.txt").write_text("good")
        assert out["data"]["engine"] == "poll"
        # Whether the host can name the odd file or skips it, the wait went on seeing changes.
        events = out["data"]["events"] + (await s.data(root, events=["create"]))["events"]
    assert {"event": "create", "path": f"{root}/good.txt"} in events
