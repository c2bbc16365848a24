"""The worker threads that run plain tools: results, errors, context, cancellation, a bounded pool."""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar

import anyio
import pytest

from fsmcp.run.workers import Workers

pytestmark = pytest.mark.anyio

who: ContextVar[str] = ContextVar("who", default="nobody")


async def test_a_result_an_error_and_the_callers_context_come_through():
    workers = Workers(4)
    who.set("caller")
    assert await workers.run(lambda a, b: (a + b, who.get(), threading.current_thread().name), 2, 3) == (5, "caller", "fsmcp-worker-1")
    with pytest.raises(KeyError, match="gone"):
        await workers.run(lambda: {}["gone"])


async def test_a_cancelled_call_returns_at_once_and_its_thread_runs_on():
    workers = Workers(4)
    release, finished = threading.Event(), threading.Event()

    def slow() -> str:
        release.wait(10)
        finished.set()
        return "late"

    with anyio.move_on_after(0.2) as scope:
        await workers.run(slow)
    assert scope.cancelled_caught and not finished.is_set()
    release.set()
    assert finished.wait(5)
    assert await workers.run(lambda: "next") == "next"  # the abandoned answer went nowhere


async def test_no_more_threads_than_the_limit_and_every_call_is_served():
    workers = Workers(3)
    running, most, lock = 0, 0, threading.Lock()

    def work(i: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return i

    results: list[int] = []

    async def one(i: int) -> None:
        results.append(await workers.run(work, i))

    async with anyio.create_task_group() as tg:
        for i in range(30):
            tg.start_soon(one, i)
    assert sorted(results) == list(range(30))
    assert most == 3 and workers._threads == 3
