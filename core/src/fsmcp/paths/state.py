"""Where the change journal lives, and the checks of that place at every start.

Apart from :mod:`fsmcp.builtin.journal` so that a start answered from the tool-list cache
(:mod:`fsmcp.run.catalog`) checks the place without loading the host.
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Iterable
from pathlib import Path

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


def unfinished(settings: Settings) -> bool:
    """Whether the journal holds something of a call cut short (or still running in another
    process): the start then loads the host, whose journal finishes it before serving."""
    directory = journal_dir(settings.journal)
    if directory is None or JOURNAL in settings.disable:
        return False
    try:
        return any(not name.endswith(".lock") for name in os.listdir(directory / "pending"))
    except OSError:
        return False


def kept(settings: Settings) -> Path | None:
    """The journal's directory when there is a journal (the setting not ``off``, the plugin not disabled)."""
    return None if JOURNAL in settings.disable else journal_dir(settings.journal)


def prepare(settings: Settings, roots: Iterable[Path]) -> None:
    """Check the journal's place against the roots and its owner, and make it 0700 when missing.

    Raises ValueError saying what to change when the place is unsafe.

    Its copies hold what the tools deleted or overwrote, secrets included, under names no policy
    protects: a root must not hold it (nor it a root). Anyone who can write it decides what an
    undo writes into the roots: it must be this user's alone, and so must the directories above.
    """
    directory = journal_dir(settings.journal)
    if directory is None or JOURNAL in settings.disable:
        return
    real = Path(os.path.realpath(directory))
    fix = 'set journal = DIR (--journal DIR) to a directory outside every root, or journal = "off" to keep no journal'
    for root in roots:
        if real == root or real.is_relative_to(root):
            raise ValueError(f"the change journal {real} lies inside the root {root}, where tools would reach the copies it keeps; {fix}")
        if root == real or root.is_relative_to(real):
            raise ValueError(f"the root {root} lies inside the change journal {real}; {fix}")
    private_dir(real, "the change journal", fix, "plant changes that an undo would write into the roots", "the copies")


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
