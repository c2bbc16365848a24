"""Where the change journal lives, and the checks of that place at every start.

Apart from :mod:`fsmcp.builtin.journal` so that a start answered from the tool-list cache
(:mod:`fsmcp.run.catalog`) checks the place without loading the host.
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Iterable
from pathlib import Path

from .roots import mount_field
from ..api.config import Settings

JOURNAL = "fsmcp.journal"
"""The journal plugin's name: ``disable = ["fsmcp.journal"]`` turns it off as ``journal = "off"`` does."""


def journal_dir(setting: str) -> Path | None:
    """Where the journal lives for the ``journal`` setting; None when it is ``off``."""
    if setting == "off":
        return None
    if setting:
        return Path(setting).expanduser()
    return state_home() / "fsmcp" / "journal"


def state_home() -> Path:
    """This user's XDG state directory: ``$XDG_STATE_HOME``, else ``~/.local/state``."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        base = os.path.expanduser("~/.local/state")
    return Path(base)


def kept(settings: Settings) -> Path | None:
    """The journal's directory when there is a journal (the setting not ``off``, the plugin not disabled)."""
    return None if JOURNAL in settings.disable else journal_dir(settings.journal)


def unfinished(settings: Settings) -> bool:
    """Whether the journal holds something of a call cut short (or still running in another
    process): the start then loads the host, whose journal finishes it before serving."""
    directory = kept(settings)
    if directory is None:
        return False
    try:
        return any(not name.endswith(".lock") for name in os.listdir(directory / "pending"))
    except OSError:
        return False


def prepare(settings: Settings, roots: Iterable[Path]) -> None:
    """Check the journal's place against the roots and its owner, and make it 0700 when missing.

    Raises ValueError saying what to change when the place is unsafe.

    Its copies hold what the tools deleted or overwrote, secrets included, under names no policy
    protects: a root must not hold it (nor it a root). Anyone who can write it decides what an
    undo writes into the roots: it must be this user's alone, and so must the directories above.
    """
    directory = kept(settings)
    if directory is None:
        return
    real = Path(os.path.realpath(directory))
    fix = 'set journal = DIR (--journal DIR) to a directory outside every root, or journal = "off" to keep no journal'
    apart(real, roots, "the change journal", fix, "tools would reach the copies it keeps")
    private_dir(real, "the change journal", fix, "plant changes that an undo would write into the roots", "the copies")


def apart(real: Path, roots: Iterable[Path], what: str, fix: str, risk: str) -> None:
    """Refuse (ValueError) a place of the server's state that a root reaches (in, around, through a mount): ``risk`` says why."""
    found = mounts()
    for root in roots:
        if real == root or real.is_relative_to(root):
            raise ValueError(f"{what} {real} lies inside the root {root}, where {risk}; {fix}")
        if root == real or root.is_relative_to(real):
            raise ValueError(f"the root {root} lies inside {what} {real}; {fix}")
        if meet(found, real, root):
            raise ValueError(f"{what} {real} and the root {root} are one place through a mount (a bind mount shows a directory under a second name), where {risk}; {fix}")


# -- one place under two names ------------------------------------------------------------------
# A bind mount shows a directory of a file system at a second path, which real paths do not see:
# the journal mounted inside a root (or a root's directory mounted where the journal lives) is
# the same place. Each path is taken to where it lies in its file system (the device, and the
# path from that file system's top: /proc/self/mountinfo), with every mount below it.


def mounts() -> list[tuple[str, str, str]]:
    """(device, the mounted directory's path in its file system, where it is mounted), in mount order."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []  # no /proc: the check by real paths is all there is
    found = []
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            found.append((fields[2], mount_field(fields[3]), mount_field(fields[4])))
    return found


def _places(mounts: list[tuple[str, str, str]], path: Path) -> list[tuple[str, str]]:
    """Where ``path`` and everything mounted below it lie: (device, path in that file system)."""
    text = str(path)
    covering = None
    below = []
    for device, top, point in mounts:
        if text == point or text.startswith(point.rstrip("/") + "/"):
            if covering is None or len(point) >= len(covering[2]):
                covering = (device, top, point)  # the last, longest: what is on top there
        elif point.startswith(text.rstrip("/") + "/"):
            below.append((device, top))
    places = below
    if covering is not None:
        device, top, point = covering
        rest = os.path.relpath(text, point)
        places.append((device, os.path.normpath(os.path.join(top, rest)) if rest != "." else top))
    return places


def meet(table: list[tuple[str, str, str]], a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` (real paths) reach one place of a file system, one within the other."""

    def within(x: str, y: str) -> bool:
        return x == y or x.startswith(y.rstrip("/") + "/")

    return any(da == db and (within(pa, pb) or within(pb, pa)) for da, pa in _places(table, a) for db, pb in _places(table, b))


def private_dir(real: Path, what: str, fix: str, could: str, kept: str | None = None) -> None:
    """Make ``real`` (a real path) 0700 when missing, and check that it and the directories
    above are this user's alone; ValueError naming ``what`` and ``fix`` when not.

    The server's state (the journal, the ledgers of temporary files, the lock file) is read
    back as what the server itself wrote: another user who could write it, or swap a directory
    above it, ``could``; one who could read it would read ``kept``.
    """
    me = os.geteuid()
    for above in reversed(real.parents):
        try:
            st = os.lstat(above)
        except FileNotFoundError:
            break
        if st.st_uid not in (0, me) or (st.st_mode & 0o002 and not st.st_mode & stat_mod.S_ISVTX):
            who = f"belongs to another user (uid {st.st_uid})" if st.st_uid not in (0, me) else "is writable by every user"
            raise ValueError(f"{above}, above {what} {real}, {who}, who could put one of their own in its place; {fix}")
    try:
        real.mkdir(parents=True, mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ValueError(f"{what} {real} cannot be made ({exc.strerror or exc}); {fix}") from None
    st = os.lstat(real)
    if not stat_mod.S_ISDIR(st.st_mode):
        raise ValueError(f"{what} {real} is not a directory; {fix}")
    if st.st_uid != me:
        raise ValueError(f"{what} {real} belongs to another user (uid {st.st_uid}), who could {could}; {fix}")
    if st.st_mode & 0o077:
        raise ValueError(
            f"{what} {real} is open to other users (mode {stat_mod.S_IMODE(st.st_mode):o}), who could {f'read {kept} or ' if kept else ''}{could}; "
            f"chmod 700 {real}, or {fix}"
        )
