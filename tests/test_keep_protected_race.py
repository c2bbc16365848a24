"""A directory moved or copied whole keeps its protected files protected, even when a protected
tree arrives at its source while the call is under way.

``FileSystem.rename`` and ``copy`` look for protected files in the source (``_keep_protected``)
before they take the paths' locks (a copy never locks its source). A second call that moves a
protected tree onto the source in between (allowed: there it stays protected) has its tree
moved or copied by the first call to a name nothing protects, where it is read.

The two calls are ordered without timing, through a change hook (``fsmcp_before_change``, run
under the announcing call's locks, before it acts):
- move: the second call's hook starts the first and waits until the first, its look at the
  source done, waits for the source's lock, which the second holds;
- copy: the first call's hook (its look done, the copy not begun) runs the second to its end.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import fsmcp_read.hooks
import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for, text_of


class Gate:
    def __init__(self, root: Path, loop: asyncio.AbstractEventLoop):
        self.root = root
        self.loop = loop
        self.when: Path | None = None
        """The path whose announcement starts ``then``."""
        self.then = None
        self.until = None
        """What the hook waits for once ``then`` started (bounded); None: ``then``'s end."""
        self.started = None
        self.waiting: list[str] = []

    @hookimpl
    def fsmcp_before_change(self, change, paths):
        if self.then is None or self.when not in [p.path for p in paths]:
            return
        then, self.then = self.then, None
        self.started = asyncio.run_coroutine_threadsafe(then(), self.loop)
        for _ in range(6000):  # bounded by count, not time
            if self.started.done() or (self.until is not None and self.until()):
                return
            time.sleep(0.01)


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["move_file", "copy_file"])
async def test_a_protected_tree_arriving_at_a_directory_being_moved_or_copied_stays_protected(tmp_path, tool):
    root = tmp_path.resolve()
    (root / "home" / ".aws").mkdir(parents=True)
    (root / "home" / ".aws" / "credentials").write_text("AWS-SECRET")
    (root / "S" / ".aws").mkdir(parents=True)
    gate = Gate(root, asyncio.get_running_loop())
    host = host_for([root], [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks), ("gate", gate)])
    hold = host.guard._hold

    def recorded(key, me):
        gate.waiting.append(key)
        return hold(key, me)

    host.guard._hold = recorded
    source = root / "S" / ".aws"
    async with connect(host) as first, connect(host) as second:

        def first_call():
            return first.call_tool(tool, {"source": "S/.aws", "destination": "S/aws"})

        def second_call():
            return second.call_tool("move_file", {"source": "home/.aws", "destination": "S/.aws", "overwrite": True})

        if tool == "move_file":
            gate.when, gate.then = root / "home" / ".aws", first_call
            gate.until = lambda: gate.waiting.count(str(source)) >= 2  # the second's hold, then the first's
            moved = await second_call()
            outcome = await asyncio.wrap_future(gate.started)
        else:
            gate.when, gate.then = root / "S" / "aws", second_call
            outcome = await first_call()
            moved = await asyncio.wrap_future(gate.started)
        assert not moved.is_error, text_of(moved)
        read = await first.call_tool("read_file", {"path": "S/aws/credentials"})
    assert "AWS-SECRET" not in text_of(read), (text_of(outcome), text_of(read))
    assert outcome.is_error and text_of(outcome).startswith("ACCESS_DENIED: "), text_of(outcome)
