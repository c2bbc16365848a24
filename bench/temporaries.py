"""What the ledger of temporary files adds to a small write: write_file with it and without it.

One host in process (``journal = "off"``, so that only the ledger differs) writes a 200-byte file
in blocks of 100 calls, the ledger on and off in turns (off: its three calls made no-ops), and
prints the median CPU time per call of each: CPU time, since on a shared machine the wall clock
measures the neighbours. Run: ``uv run python bench/temporaries.py [--dir DIR] [--blocks N]``
(``--dir /dev/shm`` leaves out the file system's own cost, whose ``fsync`` dominates a disk's).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import time
from pathlib import Path

import anyio
from common import median, print_table, ratio

from fsmcp.paths import temporaries
from fsmcp.testing import host_for


async def main(where: str, blocks: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="fsmcp-bench-temporaries-", dir=where))
    root = work / "root"
    root.mkdir()
    real = temporaries.temporary, temporaries.LEDGER.made
    ways = {
        "on": lambda: (setattr(temporaries, "temporary", real[0]), setattr(temporaries.LEDGER, "made", real[1])),
        "off": lambda: (
            setattr(temporaries, "temporary", lambda fd, name: contextlib.nullcontext(0)),
            setattr(temporaries.LEDGER, "made", lambda *args: None),
        ),
    }
    samples: dict[str, list[float]] = {"on": [], "off": []}
    try:
        host = host_for([root], entry_points=True, journal="off")
        for i in range(100):
            await host.runner.run("write_file", {"path": f"f{i % 10}.txt", "content": "x" * 200})
        for block in range(blocks):
            for way in ("on", "off") if block % 2 else ("off", "on"):
                ways[way]()
                started = time.process_time()
                for i in range(100):
                    await host.runner.run("write_file", {"path": f"f{i % 10}.txt", "content": "x" * 200})
                samples[way].append((time.process_time() - started) / 100)
    finally:
        ways["on"]()
        shutil.rmtree(work, ignore_errors=True)
    on, off = median(samples["on"]), median(samples["off"])
    print_table(
        f"temporaries: CPU per write_file of 200 bytes in {where}, median of {blocks} blocks of 100; fsmcp = with the ledger, baseline = without",
        [("write_file, 200 bytes", f"{on * 1e6:.0f} µs", f"{off * 1e6:.0f} µs", ratio(on, off))],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the root is made (default: the system's temporary directory)")
    parser.add_argument("--blocks", type=int, default=20, help="blocks of 100 calls per way (default 20)")
    options = parser.parse_args()
    anyio.run(main, options.dir, options.blocks)
