"""Nothing outside the roots is watched, named or described, whatever links point there."""

from __future__ import annotations

import os

import anyio
import pytest

pytestmark = pytest.mark.anyio

EVERY_EVENT = ["change", "create", "rename", "delete"]


@pytest.fixture
def linked(root, outside):
    """Links inside the root: to the outside directory, and to a file in it."""
    os.symlink(outside, root / "out-dir")
    os.symlink(outside / "secret.txt", root / "out-file")
    (root / "inside.txt").write_text("inside")
    return root


async def test_the_watched_path_must_be_inside(session, linked, outside):
    async with session() as s:
        await s.fail("ACCESS_DENIED", outside)
        await s.fail("ACCESS_DENIED", linked / "out-dir")
        await s.fail("ACCESS_DENIED", linked / "out-file")
        await s.fail("ACCESS_DENIED", linked / "out-dir" / "secret.txt")


async def test_links_out_are_entries_and_nothing_behind_them_shows(session, linked, outside, secret):
    async with session() as s:
        first = await s.watch(linked, since=0, events=EVERY_EVENT, recursive=True)
        # The links are entries of the root (their own times), never what they point to; all made after 0.
        assert first.splitlines() == [f"create {linked}/inside.txt", f"create {linked}/out-dir", f"create {linked}/out-file"]
        (outside / "secret.txt").write_text(secret + " and more")
        (outside / "new-secret.txt").write_text(secret)
        (outside / "deeper").mkdir()
        assert await s.watch(linked, events=EVERY_EVENT, recursive=True) == "(no changes)"


@pytest.mark.parametrize("engine", ["notify", "poll"])
async def test_changes_behind_a_link_out_never_end_a_wait(session, linked, outside, elsewhere, engine, secret):
    async with session(engine=engine) as s:
        await s.watch(linked, events=EVERY_EVENT, recursive=True)
        out: dict = {}

        async def waiting() -> None:
            out["text"] = await s.watch(linked, events=EVERY_EVENT, recursive=True, waitSeconds=1.5)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            await elsewhere(f"write:{outside}/secret.txt:{secret} changed", f"write:{outside}/another-secret.txt:x")
    assert out["text"] == "(no changes)"


@pytest.mark.parametrize("engine", ["notify", "poll"])
async def test_a_directory_swapped_for_a_link_out_reveals_nothing(session, root, outside, elsewhere, engine, secret):
    (root / "d").mkdir()
    (root / "d" / "a.txt").write_text("a")
    async with session(engine=engine) as s:
        await s.watch(root, events=EVERY_EVENT, recursive=True)
        out: dict = {}

        async def waiting() -> None:
            out["text"] = await s.watch(root, events=EVERY_EVENT, recursive=True, waitSeconds=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            (root / "d").rename(root / "d-old")
            os.symlink(outside, root / "d")
    # The link is a new object under the old name; nothing behind it is described.
    assert out["text"].splitlines() == [f"change {root}/d", f"rename {root}/d -> {root}/d-old"]
