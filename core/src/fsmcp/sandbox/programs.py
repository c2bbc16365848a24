"""The one way a plugin starts an external program: :func:`start_program`.

Every program runs confined by Landlock where the kernel has it: it may read and run what lies
beneath the roots and the system directories below, write (when the caller says it writes)
beneath the read-write roots and to ``/dev/null``, and nothing else; TCP is denied unless the
caller allows network. The kernel checks every open the program makes, whatever path it built,
whichever links it followed, so a directory swapped for a link between the server's check and
the program's open leads nowhere.

The server is threaded, so it never forks a program itself: the launcher (``launch.py --serve``,
an interpreter of its own, single-threaded, started once per server) forks for each program a
launcher that confines itself with the ruleset the server built and then becomes the program
(:mod:`.launcher`).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
import anyio.abc

from ..paths import consent
from . import launch, masks
from ..api.errors import ErrorCode, ToolError
from ..paths.state import journal_dir
from ..paths.change import ORDER

if TYPE_CHECKING:
    from . import landlock
    from .view import ProgramView
    from ..api.config import Settings
    from ..run.context import ToolContext
    from ..paths.protected import ProtectedNames
    from ..api.tools import Tool

MODES = ("auto", "require", "off")

SYSTEM_DIRS = {
    "/usr": "programs, the dynamic loader and shared libraries, locales (/usr/lib/locale, /usr/share/locale), "
    "time zones (/usr/share/zoneinfo), magic and other data files of the C library and tools",
    "/bin": "programs (on merged-/usr systems a link to /usr/bin)",
    "/sbin": "programs (a link to /usr/sbin on merged-/usr systems)",
    "/lib": "the dynamic loader and shared libraries (a link into /usr on merged-/usr systems)",
    "/lib64": "the 64-bit dynamic loader named in every x86-64 program (/lib64/ld-linux-x86-64.so.2)",
    "/lib32": "32-bit libraries, where installed",
    "/opt": "programs installed outside the package manager's tree, where present",
    "/sys/devices/system/cpu": "the CPU count the C library's sysconf and a program's thread pool read",
}
"""Read and execute: what a program needs in order to be loaded and run."""

ETC_FILES = {
    "/etc/ld.so.cache": "the dynamic loader's index of shared libraries",
    "/etc/ld.so.preload": "libraries the loader must preload, where the system has any",
    "/etc/localtime": "the time zone (dates in ls -l, find -printf, stat)",
    "/etc/nsswitch.conf": "where the C library looks users and groups up",
    "/etc/passwd": "user names for file owners (ls -l, stat, find -user)",
    "/etc/group": "group names for file groups",
    "/etc/magic": "the local additions to file's magic database",
}
"""Read only: the files under /etc the C library and the allowed tools read. The rest of /etc
(host keys, credentials, configuration) stays out of reach."""

NETWORK_FILES = {
    "/etc/resolv.conf": "the name servers",
    "/etc/hosts": "static host names",
    "/etc/host.conf": "the resolver's options",
    "/etc/gai.conf": "address ordering for getaddrinfo",
    "/etc/services": "port names",
    "/etc/protocols": "protocol names",
    "/etc/ssl": "certificate authorities for TLS",
    "/etc/ca-certificates": "certificate authorities for TLS",
}
"""Read only, and only when the program is allowed network."""

DEVICES_READ = {
    "/dev/zero": "zeros",
    "/dev/urandom": "random bytes (where getrandom is not used)",
    "/dev/random": "random bytes",
}
DEVICES_WRITE = {"/dev/null": "discarded output, read as empty input"}


class Sandbox:
    """What the operator asked for (``mode``) and what the kernel offers (``abi``, 0 for none).

    The kernel is asked at the first need: a server that offers no tool starting programs
    never loads ``ctypes``.
    """

    def __init__(self, mode: str):
        self.mode = mode

    @classmethod
    def of(cls, settings: Settings) -> Sandbox:
        return cls(settings.sandbox)

    @functools.cached_property
    def abi(self) -> int:
        if self.mode == "off":
            return 0
        from . import landlock

        return landlock.abi()

    @property
    def confines(self) -> bool:
        return self.mode != "off" and self.abi > 0

    def describe(self) -> str:
        """Whether programs are confined, for the start-up line and ``fsmcp plugins``."""
        if self.confines:
            return f"programs confined by Landlock ABI {self.abi}"
        if self.mode == "off":
            return "programs NOT confined (sandbox = off)"
        return f"programs not started: this kernel offers no Landlock (sandbox = {self.mode}), so the tools that start them are not offered"

    def hiding(self) -> str:
        """How protected files are kept from programs, for ``fsmcp plugins``."""
        if self.mode != "off" and not self.confines:
            return "protected files: no program is started, so none reads them"
        if not self.confines:
            return "protected files NOT hidden from programs: only their arguments are checked"
        if masks.can_mount():
            return "protected files hidden from programs by read-only empty mounts over them (a user namespace each)"
        return (
            "protected files hidden from programs by Landlock alone (this system allows no user namespace): "
            "a program cannot read back a file it creates in a directory holding one, nor remove or rename there, nor make hard links"
        )

    def undoing(self) -> str:
        """Whether what programs change can be undone, for ``fsmcp plugins``."""
        if self.mode != "off" and not self.confines:
            return "programs' changes: no program is started"
        from .view import cannot

        why = cannot(self.mode)
        if why is None:
            return "programs' changes: journaled, undoable and previewable (each program writes to a copy-on-write view of the roots)"
        return f"programs' changes: NOT undoable, nor previewable with dryRun ({why})"

    def gate(self, tools: dict[str, Tool]) -> tuple[dict[str, Tool], str | None]:
        """The tools to offer, and what to say about it on stderr at start-up (once), if anything.

        On a kernel without Landlock, ``require`` and ``auto`` alike withhold every tool that
        starts programs: unconfined, a program reads and writes wherever the server may (a link
        swapped in at the right moment, a path it builds itself), so only the operator's explicit
        ``off`` offers them so.
        """
        starting = sorted(name for name, tool in tools.items() if tool.starts_programs)
        if not starting or self.mode == "off" or self.confines:
            return tools, None
        kept = {name: tool for name, tool in tools.items() if not tool.starts_programs}
        return kept, (
            f"sandbox = {self.mode}, and this kernel offers no Landlock, so {', '.join(starting)} "
            "(which start programs) are not offered; run on Linux 5.13 or newer with Landlock enabled "
            "(lsm=landlock), or set sandbox = \"off\" to offer them unconfined"
        )


async def start_program(
    ctx: ToolContext,
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    executable: str | None = None,
    writes: bool = False,
    network: bool = False,
    runs: Sequence[str] = (),
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
    view: ProgramView | None = None,
) -> anyio.abc.Process:
    """Start ``argv`` in a new session, confined to the roots of ``ctx``'s call.

    ``executable`` is the program's file (else ``argv[0]`` looked up on ``env``'s PATH).
    ``writes``: the program may change files beneath the read-write roots (otherwise it may
    only read, wherever it is). ``view`` (with ``writes``): the program writes to that
    copy-on-write view of the read-write roots, not to them (:class:`fsmcp.ProgramView`); once
    the process's ``wait()`` has returned, the view is the server's alone to read. A file the
    user allowed this call to read is read by its identity, which the view would change: the
    program then runs without it, and ``view.why_not`` says so. ``network``: TCP stays allowed.
    ``runs``: directories whose
    programs it may start in turn (a shell's PATH), besides the system's. The caller owns the process:
    kill its group (``os.killpg(process.pid, ...)``) and ``aclose`` it when done.
    Raises ``ToolError`` when the kernel cannot confine it and the operator did not set ``sandbox = "off"``.
    """
    program = executable or shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if program is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"{argv[0]} is not installed: it is not on the PATH ({env.get('PATH', '')})")
    sandbox = _sandbox(ctx.settings.sandbox)
    options: dict[str, Any] = dict(stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=dict(env), start_new_session=True)
    if not sandbox.confines:
        if sandbox.mode != "off":
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{argv[0]} was not started: this kernel offers no Landlock to confine it, and the operator did not set sandbox = off",
            )
        return await anyio.open_process([program, *argv[1:]], **options)
    # From here until the call ends no change of the server's runs: what is listed now stays so.
    await ORDER.program(ctx, ctx.change)
    hidden = await anyio.to_thread.run_sync(masks.protected, protected_roots(ctx))
    pinned: dict[str, tuple[int, int]] = {}
    if (asked := consent.CURRENT.get()) is not None:
        hidden, pinned = asked.unhidden(hidden)  # what the user let this call read: that file, not its path
    hidden += _journal(ctx)
    # In namespaces of its own whenever this system allows them, nothing hidden or not: its PID
    # namespace ends whatever it leaves behind with it (launch.alone).
    mounts = await anyio.to_thread.run_sync(masks.can_mount)
    # A pinned file's neighbours are hidden by the ruleset too, mounts or not: a directory swapped
    # in above the pinned file between this check and the launcher's mounts would bring its own.
    hidden_by_rules = hidden if pinned or not mounts else ()
    if view is not None and view.layers and pinned:
        view.refuse("a file the user allowed this call to read is read by its identity, which a view would change")
    layers = [layer.root for layer in view.layers] if view is not None else []
    rules = ruleset(ctx, sandbox.abi, program, writes=writes, network=network, runs=runs, hidden=hidden_by_rules, pinned=pinned)
    fd = rules.build(leaving=layers)
    late = [f"{launch.LATE}{rights}{path}" for rights, path in rules.beneath(layers)]
    from . import launcher  # here: the launcher's module loads libc
    from .launch import HOLD

    # A directory above a hidden (or allowed) file is held in place too: renamed, it would carry
    # the file out from under the name that protects it, to be read by the server's own tools.
    held = masks.above([*hidden, *pinned], (str(root.path) for root in ctx.fs.roots.roots)) if mounts else []
    overlays = view.listing() if view is not None else []
    listed = masks.listing([*overlays, *late, *(HOLD + d for d in held), *hidden]) if mounts else None
    if view is not None and view.layers:
        await view.ready()
    status, told = os.pipe()
    try:
        # Hidden by Landlock alone, a protected file could be linked to a plain name the server reads.
        # Without namespaces, the filter of hard links, setsid and setpgid holds whether or not
        # anything is hidden now: a process outliving its call could see what is moved in next.
        process = await launcher.launch(
            program, argv, cwd=cwd, env=env, ruleset=fd, listing=listed, status=told, stdin=stdin, stdout=stdout, stderr=stderr
        )
    except BaseException:
        os.close(status)
        raise
    finally:
        for each in (fd, told, listed):
            if each is not None:
                os.close(each)
    try:
        # The launcher says why it did not start the program, or its exec closes the pipe unsaid.
        why = await _told(status)
    except BaseException:
        with anyio.CancelScope(shield=True):
            _kill(process)
            await process.aclose()
        raise
    if why:
        with anyio.CancelScope(shield=True):
            await process.aclose()
        if (errno := launcher.errno_of(why)) is not None:
            raise OSError(errno, os.strerror(errno), cwd)
        raise ToolError(
            ErrorCode.PERMISSION_DENIED,
            f"{argv[0]} was not started: {why}. Nothing ran; run it again (a protected file that changed while it was being "
            "hidden is hidden as it is now), and if this persists the operator should look at the server's stderr",
        )
    return process


async def _told(fd: int) -> str:
    """What the launcher wrote to its status pipe before the pipe closed (nothing, once the program runs)."""
    try:
        data = b""
        while True:
            await anyio.wait_readable(fd)
            if not (chunk := os.read(fd, 4096)):
                return data.decode("utf-8", "replace")
            data += chunk
    finally:
        os.close(fd)


def _kill(process: anyio.abc.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # gone already


def _journal(ctx: ToolContext) -> list[str]:
    """The change journal's directory (``/``-terminated), where it lies inside a root the program sees."""
    directory = journal_dir(ctx.settings.journal)
    if directory is None:
        return []
    real = os.path.realpath(directory)
    if not os.path.isdir(real) or not any(Path(real).is_relative_to(root.path) for root in ctx.fs.roots.roots):
        return []  # absent, it cannot be made while the program runs: only the server's changes make it
    return [real + "/"]


def protected_roots(ctx: ToolContext) -> list[tuple[str, ProtectedNames, tuple[str, ...]]]:
    """The call's roots that protect some names: each with the names of the innermost operator
    root holding it, and where it lies below each operator root holding it and below ``/`` (a
    client's root ``R/.aws`` is ``.aws/`` below ``R``, where ``**/.aws/credentials`` is matched from)."""
    found = []
    for root in ctx.fs.roots.roots:
        holders = ctx.fs.roots.holders(root.path)
        if holders and (names := ctx.protected(holders[0])):
            prefixes = tuple("" if h.path == root.path else f"{root.path.relative_to(h.path)}/" for h in holders)
            prefixes += (f"{str(root.path)[1:]}/" if str(root.path) != "/" else "",)  # and from the file system's root
            found.append((str(root.path), names, prefixes))
    return found


@functools.cache
def _sandbox(mode: str) -> Sandbox:
    return Sandbox(mode)


def ruleset(
    ctx: ToolContext,
    abi: int,
    program: str,
    *,
    writes: bool,
    network: bool,
    runs: Sequence[str] = (),
    hidden: Sequence[str] = (),
    pinned: Mapping[str, tuple[int, int]] | None = None,
) -> landlock.Ruleset:
    """Every grant a program started for this call gets; none reaches ``hidden``, and a ``pinned``
    file is readable only as the file (device, inode) given."""
    from . import landlock

    rules = landlock.Ruleset(abi, network=network, hidden=frozenset(hidden), pinned=dict(pinned or {}))
    for root in ctx.fs.roots.roots:
        rules.grant(root.path, landlock.RUN)
        if writes and ctx.fs.roots.writable(root):
            rules.grant(root.path, landlock.WRITE)
    rules.grant_each(SYSTEM_DIRS, landlock.RUN)
    # The program's directory (ripgrep's is the environment's bin/, outside the system's), and
    # what the caller says it runs in turn.
    rules.grant(os.path.dirname(program), landlock.RUN)
    rules.grant_each(runs, landlock.RUN)
    rules.grant_each(ETC_FILES, landlock.READ_FILE)
    if network:
        rules.grant_each(NETWORK_FILES, landlock.READ)
    rules.grant_each(DEVICES_READ, landlock.READ_FILE)
    rules.grant_each(DEVICES_WRITE, landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE | landlock.IOCTL_DEV)
    return rules
