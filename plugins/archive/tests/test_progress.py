"""Progress notifications reach the SDK client, in both protocol eras; cancellation leaves nothing."""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from fsmcp import ToolContext, ToolError

pytestmark = pytest.mark.anyio


def large_tree(top: Path, files: int = 200, size: int = 32 << 10) -> int:
    noise = random.Random(1)
    for n in range(files):
        path = top / f"pkg{n % 10}" / f"file{n}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(noise.randbytes(size))
    return files * size


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_large_compress_and_extract_send_progress_to_the_client(server, root, kit, mode):
    large_tree(root / "big")
    seen: dict[str, list[tuple[float, float | None, str | None]]] = {"compress_files": [], "extract_archive": []}
    async with server(mode=mode) as s:
        for name, args in [
            ("compress_files", {"files": ["big"], "output": "big.tar.gz"}),
            ("extract_archive", {"archive": "big.tar.gz", "destination": "copy"}),
        ]:

            async def record(progress, total, message, name=name):
                seen[name].append((progress, total, message))

            result = await s.client.call_tool(name, args, progress_callback=record)
            assert not result.is_error
    assert kit.tree(root / "copy" / "big") == kit.tree(root / "big")
    for name, events in seen.items():
        assert len(events) >= 5, (name, events)
        values = [p for p, _, _ in events]
        assert values == sorted(set(values)), name  # strictly increasing
        final, total, message = events[-1]
        assert final == total and message.startswith(("archiving: 211 members", "extracting: 211 members")), events[-1]


async def cancel_through_the_host(kit, root: Path, name: str, args: dict) -> None:
    """Run a tool as the server does, and cancel its task from its second progress report.

    The report holds the tool's thread until the host has seen the cancellation, so the tool's
    next step is the one that must stop.
    """
    host = kit.host(root)
    scope = anyio.CancelScope()
    cancelled = anyio.Event()
    reports: list[str | None] = []

    async def on_progress(done, total, message):
        reports.append(message)
        if len(reports) == 2:
            scope.cancel()
            await cancelled.wait()

    with scope:
        await host.runner.run(name, args, send_progress=on_progress)
    cancelled.set()
    assert scope.cancelled_caught and len(reports) == 2


async def cancel_through_the_context(kit, root: Path, name: str, args: dict) -> None:
    """Run a tool in a worker thread with its own context, and mark that context cancelled."""
    host = kit.host(root)
    tool = host.tools[name]
    reports: list[str | None] = []

    async def on_progress(done, total, message):
        reports.append(message)
        if len(reports) == 2:
            ctx.cancel()

    ctx = ToolContext(fs=host.fs, settings=host.settings, tool=tool, send_progress=on_progress)
    with pytest.raises(ToolError, match=f"{name} was cancelled by the client"):
        await anyio.to_thread.run_sync(tool.function, tool.input_model.model_validate(args), ctx)
    assert len(reports) == 2


CANCELLERS = [cancel_through_the_host, cancel_through_the_context]


@pytest.mark.parametrize("cancel", CANCELLERS)
async def test_a_cancelled_compress_leaves_no_output_and_no_temporary_file(root, kit, cancel):
    large_tree(root / "big")
    await cancel(kit, root, "compress_files", {"files": ["big"], "output": "big.zip"})
    with anyio.fail_after(30):
        while [p for p in root.iterdir() if p.name.startswith(".big.zip")]:
            await anyio.sleep(0.01)
    assert sorted(p.name for p in root.iterdir()) == ["big"]


@pytest.mark.parametrize("cancel", CANCELLERS)
async def test_a_cancelled_extraction_leaves_the_destination_as_it_was(server, root, kit, cancel):
    large_tree(root / "big")
    async with server() as s:
        await s.ok("compress_files", files=["big"], output="big.tar")
    (root / "dest").mkdir()
    (root / "dest" / "keep.txt").write_text("kept\n")
    before = kit.tree(root)
    await cancel(kit, root, "extract_archive", {"archive": "big.tar", "destination": "dest"})
    with anyio.fail_after(30):
        while kit.tree(root) != before:
            await anyio.sleep(0.01)
