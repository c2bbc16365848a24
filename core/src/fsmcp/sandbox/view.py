"""A program's copy-on-write view of the read-write roots: :class:`ProgramView`.

The launcher mounts an overlay on each read-write root's own path in the program's mount
namespace, the root its lower layer, a directory of the server's its upper: the program reads
the root as it is, and what it writes, deletes or renames lands in the upper only. When it has
ended (and its namespace with it), the server applies the upper to the roots as one change of
the call (:mod:`.commit`), or only reads it (``dryRun``). Nothing the program does reaches a
root before that.

The upper and its overlay work directory live in the server's state directory, outside every
root (inside one, the program would see and write them through its own view), else in
``/dev/shm``; an empty pair for each root of each call, 0700; when the call ends a pair left
empty is kept for the next program, any other removed (and so are those of a server that died).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import logging
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from ..paths import state
from . import masks

if TYPE_CHECKING:
    from ..run.context import ToolContext

CLOCK_REALTIME_COARSE = 5
"""Linux's; Python 3.11's ``time`` lacks the name. The kernel stamps change times from it (or,
for a file whose times were just read, the finer clock), never earlier."""
OVERLAY = "\x01"
"""Before each of a layer's three paths (root, upper, work) in the launcher's listing (:func:`launch.hide`)."""
LATE = "\x02"
"""Before a rule the launcher adds once the overlays are mounted: ``LATE + rights + "\\0" + path``."""
_COUNT = itertools.count()
SPARES = 4
"""Empty layers kept per place for the next programs."""
_SPARE: dict[str, list[str]] = {}
_LOCK = threading.Lock()
log = logging.getLogger("fsmcp")


@dataclass(frozen=True)
class Layer:
    """One read-write root under the view."""

    root: str
    """The root's real path: the overlay is mounted on it, the root as its lower layer."""
    upper: str
    """Where what the program writes over ``root`` lands."""
    work: str
    """The overlay's work directory, on the same mount as ``upper``."""


@dataclass
class ProgramView:
    """The view a program of one call runs over (:func:`fsmcp.start_program`'s ``view``), or why none can be made."""

    layers: list[Layer] = field(default_factory=list)
    mark: int = 0
    """A root path whose change time (ns) is at or after it was changed by someone else while the
    program ran: the fine clock when the view was opened, plus 1 ns. A change made before has a
    change time at most that clock's; one made once the coarse clock has passed the mark (the
    program starts only then: :meth:`ready`), at least the mark."""
    why_not: str | None = None
    """None when the view is made; else why not (the program's changes then cannot be undone)."""

    @classmethod
    def open(cls, ctx: ToolContext) -> ProgramView:
        """A view of ``ctx``'s read-write roots (the outermost of nested ones), or one saying why none."""
        why = cannot(ctx.settings.sandbox)
        roots = sorted(str(r.path) for r in ctx.fs.roots.roots if ctx.fs.roots.writable(r))
        outer = [r for r in roots if not any(r != o and r.startswith(o.rstrip("/") + "/") for o in roots)]
        every = [str(r.path) for r in ctx.roots.operator] + roots
        if why is None and not outer:
            why = "no root is writable"
        if why is None:
            why = next((w for r in outer if (w := _unfit(r)) is not None), None)
        if why is None:
            base = _base(every)
            if base is None:
                why = "no place for its upper layers lies outside every root (the state directory, /dev/shm)"
        if why is not None:
            return cls(why_not=why)
        view = cls(mark=time.clock_gettime_ns(time.CLOCK_REALTIME) + 1)
        try:
            for root in outer:
                place = _layer_place(base)
                view.layers.append(Layer(root, os.path.join(place, "upper"), os.path.join(place, "work")))
        except OSError as exc:
            view.close()
            return cls(why_not=f"its upper layers could not be made in {base} ({exc.strerror})")
        return view

    async def ready(self) -> None:
        """Return once the coarse clock has passed the mark (at most a clock tick, some milliseconds,
        usually spent already): from then on every change is stamped at or after it."""
        while time.clock_gettime_ns(CLOCK_REALTIME_COARSE) < self.mark:
            await anyio.sleep(0.001)

    @staticmethod
    def unavailable(mode: str) -> str | None:
        """Why no program gets a view on this system under ``sandbox = mode`` (None: they do)."""
        return cannot(mode)

    def listing(self) -> list[str]:
        """What the launcher's listing says of the view, before the masks."""
        return [OVERLAY + path for layer in self.layers for path in (layer.root, layer.upper, layer.work)]

    def refuse(self, why: str) -> None:
        """No view after all, for ``why``: the program writes to the roots."""
        self.close()
        self.layers, self.why_not = [], why

    def close(self) -> None:
        """Put the layers away (once the program's namespace is gone): an empty one is kept for
        the next program (removing and making directories costs milliseconds on some file
        systems), any other removed. Idempotent."""
        layers, self.layers = self.layers, []
        for layer in layers:
            place = os.path.dirname(layer.upper)
            with _LOCK:
                spare = _SPARE.setdefault(os.path.dirname(place), [])
                if len(spare) < SPARES and _empty(place):
                    spare.append(place)
                    continue
            _remove(place)


def cannot(mode: str) -> str | None:
    """Why no program gets a view on this system (None: they do), for the start-up line and ``fsmcp plugins``."""
    if mode == "off":
        return 'sandbox = "off": programs are not confined'
    if not masks.can_mount():
        return "this system allows no user namespace to mount it in"
    if not can_overlay():
        return "this kernel mounts no overlay in a user namespace"
    return None


@functools.cache
def can_overlay() -> bool:
    """Whether the launcher can mount an overlay in its user namespace here (``launch.py --probe-overlay``)."""
    done = subprocess.run([sys.executable, "-I", "-S", masks.LAUNCHER, "--probe-overlay"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    return done.returncode == 0


def _unfit(root: str) -> str | None:
    """Why ``root`` cannot be overlaid, or None."""
    if any(c in root for c in ",:\\"):
        return f"the root {root} has a comma, colon or backslash in its path, which an overlay's options cannot carry"
    below = [point for _, _, point in state.mounts() if point.startswith(root.rstrip("/") + "/")]
    if below:
        return f"{below[0]} is mounted inside the root {root}, and an overlay of the root would not show it"
    return None


def _base(roots: list[str]) -> str | None:
    """Where layers are made, outside every root: the state directory's ``views``, else ``/dev/shm/fsmcp-UID``."""
    for base in (state.state_home() / "fsmcp" / "views", Path(f"/dev/shm/fsmcp-{os.geteuid()}")):
        real = os.path.realpath(base)
        if any(real == r or real.startswith(r.rstrip("/") + "/") or r.startswith(real + "/") for r in roots):
            continue
        try:
            os.makedirs(real, mode=0o700, exist_ok=True)
            st = os.lstat(real)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            continue  # another's, or open to others: not a place for what a program wrote
        if real not in _SPARE:
            _sweep(real)
        return real
    return None


def _layer_place(base: str) -> str:
    """A directory holding an empty ``upper`` and ``work``: a spare one of this process's, else a new one."""
    with _LOCK:
        spare = _SPARE.setdefault(base, [])
        while spare:
            place = spare.pop()
            if _empty(place):  # nothing wrote to it since it was put away
                return place
            _remove(place)
    place = os.path.join(base, f"{os.getpid()}-{next(_COUNT)}")
    os.mkdir(place, 0o700)
    os.mkdir(os.path.join(place, "upper"), 0o700)
    os.mkdir(os.path.join(place, "work"), 0o700)
    return place


def _empty(place: str) -> bool:
    """Whether ``place``'s upper layer and the overlay's work directory hold nothing."""
    work = os.path.join(place, "work", "work")
    try:
        if os.path.exists(work):
            os.chmod(work, 0o700)  # the overlay leaves it mode 000
            if os.listdir(work):
                return False
        return not os.listdir(os.path.join(place, "upper")) and os.listdir(os.path.join(place, "work")) in ([], ["work"])
    except OSError:
        return False


def _remove(place: str) -> None:
    try:
        if os.path.exists(work := os.path.join(place, "work", "work")):
            os.chmod(work, 0o700)
        shutil.rmtree(place)
    except OSError as exc:  # left for the operator to see, never to fail the call it served
        log.warning("the program's layer %s could not be removed: %s", place, exc)


def _sweep(base: str) -> None:
    """Remove the layers a server that ended without putting them away left (its process is gone)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        pid, _, n = name.partition("-")
        if pid.isdigit() and n.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            _remove(os.path.join(base, name))


@atexit.register
def _put_away() -> None:
    with _LOCK:
        for spare in _SPARE.values():
            for place in spare:
                _remove(place)
            spare.clear()
