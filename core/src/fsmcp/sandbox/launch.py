"""The launcher every confined program starts through: ``python -I -S launch.py RULESET MASKS STATUS PROGRAM ARGV0 ARGS...``.

It is single-threaded, so what it does between the server's request and the program's ``exec``
is plain code, not a ``preexec_fn`` in a copy of a threaded server (where a lock held by another
thread at the fork would be held forever). The server starts it once, as ``launch.py --serve``
(:func:`serve`), and for each program this process, which stays unconfined and in no namespace,
forks a launcher that does what one started with those arguments does (:func:`main`), in
the same order, from a copy of a process that has done nothing of it: an interpreter's start
and ``ctypes`` are paid once per server instead of once per program. The server has
built the Landlock ruleset already and hands it over as descriptor ``RULESET``; here only the
calls that must be made by the process being confined are left: ``no_new_privs`` (which
Landlock requires of an unprivileged caller, and which keeps set-user-ID programs from
regaining what the ruleset takes away) and ``landlock_restrict_self``. Then ``exec``: the
program starts already inside the ruleset, as do all its children.

``MASKS`` is ``-``, ``no-links`` (the ruleset hides the protected files: :func:`forbid_links`),
or a descriptor to read the protected paths from (NUL-separated, absolute; a directory's ends
with ``/``; a directory above one, to hold in place, is given first, behind ``=``), each checked
again here to be what was listed. Then, before the ruleset, the launcher enters a user and mount
namespace of its own (``unshare`` is refused to a threaded process: this one is not) and mounts
an empty read-only file (or directory) over each: the program, and everything it starts, reads
nothing there, cannot write there, and cannot remove, rename or link what is mounted
(EBUSY, EXDEV), nor rename a directory above it (each is mounted on itself: EBUSY). The
program then runs in a PID namespace of its own (:func:`alone`), which ends with it; with no
user namespace the launcher is its subreaper instead (:func:`kept`). The ruleset denies the program ``mount`` and ``umount``, so it cannot lift
them. The user namespace maps every user and group the launcher knows to itself, so file
ownership and permissions read as before. ``launch.py --probe`` does the same on nothing and
says by its status whether this system allows it. ``STATUS`` is ``-`` or a pipe's descriptor:
why the program was not started is written there, and the ``exec`` closes it unwritten.

Standard library only, and nothing imported that is not needed: this file is run by path with
``-S``, and every millisecond here is added to every program the server starts.
"""

import ctypes
import os
import signal
import stat
import sys

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_FSOPEN, SYS_FSCONFIG, SYS_FSMOUNT = 428, 429, 430, 431, 432
"""The same numbers on every architecture: these calls came after the tables were unified."""
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE = 1, 38, 36, 4
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
FSCONFIG_SET_STRING, FSCONFIG_CMD_CREATE = 1, 6
OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH, AT_FDCWD = 1, 0x4, -100
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
FILE_RIGHTS = 1 | 2 | 4 | 1 << 14 | 1 << 15
"""Landlock's rights that apply to a file (execute, write, read, truncate, ioctl): a rule on a file holds no others."""
HOLD = "="
"""Before a path in ``MASKS``: a directory above a protected file, to hold in place (:func:`hold`), not to mask."""
NO_LINKS = "no-links"
"""``MASKS`` when the protected files are hidden by Landlock alone: no hard links (see :func:`forbid_links`)."""
LINK_CALLS = {"x86_64": (0xC000003E, (86, 265, 425, 109, 112)), "aarch64": (0xC00000B7, (37, 425, 154, 157))}
"""Per machine: its audit architecture, and link, linkat, io_uring_setup, setpgid and setsid
(aarch64 has no link)."""
PRLIMIT_CALLS = {0xC000003E: 302, 0xC00000B7: 261}
"""``prlimit64`` by audit architecture (x86_64, aarch64)."""
MOUNT_CALLS = (428, 429, 430, 431, 432, 433, 442)
"""open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr: one number on every machine."""
CANNOT_CONFINE = 126
"""Exit status when the program was not started because it could not be confined."""
REQUEST_FDS = 7
"""Descriptors of one request to :func:`serve`: the request itself, the ruleset, the status pipe,
the report pipe, the program's standard input, output and error; then, when masks are mounted,
the listing of what to hide."""

ERRNO = "\0errno "
"""Before an ``errno`` on the status pipe: the forked launcher could not enter the working directory."""

_report: int | None = None
"""In a launcher forked by :func:`serve`: the pipe the program's end is written to, as a wait
status, for the server (which cannot wait for a process it did not start)."""

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), what)
    return result


def confine(fd: int) -> None:
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(_libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, fd, 0), "landlock_restrict_self")
    os.close(fd)


def forbid_mount_api() -> None:
    """From here on the new mount API's calls fail with EPERM, in this process and all it starts.

    A program run as root keeps its capabilities in the user namespace the launcher made, where
    the masks were mounted: Landlock refuses it ``mount``, ``umount`` and ``move_mount``'s
    effects, but ``open_tree(OPEN_TREE_CLONE)`` without ``AT_RECURSIVE`` would copy a root's
    tree without the masks over it, and every file read through the copy unmasked. A program
    has no use for them. Needs ``no_new_privs`` (set by :func:`confine`).
    """
    _filter(MOUNT_CALLS, "seccomp (no new mounts)")


def forbid_links() -> None:
    """From here on ``link`` and ``linkat`` fail with EPERM, in this process and all it starts.

    Where the protected files are hidden by Landlock alone, the ruleset keeps a program from
    reading one, but a hard link needs only the right to make a file in the directory: linked
    to a plain name, a secret would be read by the server's own tools. ``io_uring`` is refused
    too (its operations, links among them, pass no system call a filter sees), and so is every
    call of another architecture's table (a 32-bit or x32 call would be a different number).
    ``setsid`` and ``setpgid`` too: with no PID namespace to end them, a process that left the
    program's process group would outlive the server's kill of that group (a timeout), and its
    call's place in the order, and see what the server moves in next.
    Needs ``no_new_privs`` (set by :func:`confine`).
    """
    _filter(LINK_CALLS[os.uname().machine][1], "seccomp (no hard links)")


def _filter(calls: tuple[int, ...], what: str) -> None:
    """A seccomp filter that refuses ``calls`` (EPERM), every call of another architecture's
    table, and ``prlimit64`` on any process but the caller's own (pid 0).

    ``prlimit64`` needs only the same user: Landlock does not scope it. A program could lower the
    limits of the processes that wait for it (one with no descriptors left cannot list what the
    program left behind) or of another call's program (a file size of 0 ends its next write).
    ``setrlimit`` and ``prlimit -p 0`` keep working on the program's own limits.
    """
    arch, _ = LINK_CALLS[os.uname().machine]
    # (code, jt, jf, k) with jt/jf as labels ("deny", "allow", "limits") or 0 for the next instruction.
    code: list[tuple[int, object, object, int]] = [(0x20, 0, 0, 4), (0x15, 0, "deny", arch), (0x20, 0, 0, 0)]
    if arch == 0xC000003E:
        code.append((0x35, "deny", 0, 0x40000000))  # x32 calls: numbers from bit 30 up
    code += [(0x15, "deny", 0, number) for number in calls]  # jeq, against the call's number
    code += [(0x15, "limits", 0, PRLIMIT_CALLS[arch]), (0x06, 0, 0, 0x7FFF0000)]  # allow
    labels = {"limits": len(code)}
    code += [(0x20, 0, 0, 16), (0x15, 0, "deny", 0), (0x20, 0, 0, 20), (0x15, "allow", "deny", 0)]  # its pid, both halves 0
    labels["allow"] = len(code)
    code.append((0x06, 0, 0, 0x7FFF0000))
    labels["deny"] = len(code)
    code.append((0x06, 0, 0, 0x00050000 | 1))  # EPERM

    def jump(at: int, to: object) -> int:
        return 0 if to == 0 else labels[str(to)] - at - 1

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

    resolved = [Instruction(op, jump(i, jt), jump(i, jf), k) for i, (op, jt, jf, k) in enumerate(code)]
    instructions = (Instruction * len(code))(*resolved)
    program = Program(len(code), instructions)
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0), what)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _identity(kind: str) -> str:
    with open(f"/proc/self/{kind}_map") as f:
        return "".join(f"{first} {first} {count}\n" for first, _, count in (line.split() for line in f))


def enter_namespace() -> None:
    """A user and mount namespace of this process's own, ids unchanged, mounts no longer shared.

    An unprivileged launcher maps its own user and group only (all the kernel allows it). A
    privileged one maps every id it knows, so that its programs keep the right to open files of
    other owners; the kernel takes such a map only from a writer outside the new namespace, so
    a child forked before ``unshare`` writes it.
    """
    uid, gid = os.geteuid(), os.getegid()
    if uid != 0:
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        _write("/proc/self/setgroups", "deny")  # the kernel's condition for an unprivileged gid map
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    else:
        maps = {"uid": _identity("uid"), "gid": _identity("gid")}
        ready, go = os.pipe()
        me = os.getpid()
        writer = os.fork()
        if writer == 0:
            os.close(go)
            status = 1
            try:
                if os.read(ready, 1) == b"1":
                    for kind, text in maps.items():
                        _write(f"/proc/{me}/{kind}_map", text)
                    status = 0
            finally:
                os._exit(status)
        os.close(ready)
        entered = _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0
        errno = ctypes.get_errno()
        os.write(go, b"1" if entered else b"0")
        os.close(go)
        _, status = os.waitpid(writer, 0)
        if not entered:
            raise OSError(errno, os.strerror(errno), "unshare")
        if status != 0:
            raise OSError(1, "the identity maps could not be written", "uid_map")
    _check(_libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "mount --make-rprivate /")


def empty_tree() -> int:
    """A detached tmpfs mount holding an empty file ``f`` and an empty directory ``d``, mounted nowhere."""
    fs = _check(_libc.syscall(SYS_FSOPEN, b"tmpfs", 1), "fsopen(tmpfs)")  # FSOPEN_CLOEXEC
    try:
        _check(_libc.syscall(SYS_FSCONFIG, fs, FSCONFIG_SET_STRING, b"size", b"4k", 0), "fsconfig(size)")
        _check(_libc.syscall(SYS_FSCONFIG, fs, FSCONFIG_CMD_CREATE, None, None, 0), "fsconfig(create)")
        tree = _check(_libc.syscall(SYS_FSMOUNT, fs, 1, 0), "fsmount")  # FSMOUNT_CLOEXEC
    finally:
        os.close(fs)
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444, dir_fd=tree))
    os.mkdir("d", 0o555, dir_fd=tree)
    return tree


def mask(tree: int, path: str) -> None:
    """Mount ``tree``'s empty file (or directory, for a path ending in ``/``) over ``path``, read-only."""
    source = b"d" if path.endswith("/") else b"f"
    target = os.fsencode(path.rstrip("/") or "/")
    clone = _check(_libc.syscall(SYS_OPEN_TREE, tree, source, OPEN_TREE_CLONE | os.O_CLOEXEC), "open_tree")
    try:
        _check(_libc.syscall(SYS_MOVE_MOUNT, clone, b"", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH), f"move_mount {path}")
    finally:
        os.close(clone)
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    _check(_libc.mount(None, target, None, ctypes.c_ulong(flags), None), f"remount read-only {path}")


def as_listed(path: str) -> None:
    """Raise unless ``path`` is still what the server listed: a directory for a path ending in
    ``/``, else a file (not a link). A path that vanished may live on under another name, and
    one that changed type would not take its mask: either way the program is not started."""
    mode = os.lstat(path.rstrip("/") or "/").st_mode  # FileNotFoundError when it vanished
    now = "a link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else "a file"
    if now != ("a directory" if path.endswith("/") else "a file"):
        raise OSError(0, f"listed as {'a directory' if path.endswith('/') else 'a file'}, it is {now} now", path)


def hold(path: str) -> None:
    """Mount the directory ``path`` on itself: in this namespace it is a mount point, which no
    one here can rename or remove (EBUSY). A directory above a masked file moved elsewhere
    would take the file, on the disk, out from under the name that protects it."""
    mode = os.lstat(path).st_mode  # FileNotFoundError when it vanished
    if not stat.S_ISDIR(mode):
        raise OSError(0, "listed as a directory above a protected file, it is no directory now", path)
    target = os.fsencode(path)
    _check(_libc.mount(target, target, None, ctypes.c_ulong(MS_BIND | MS_REC), None), f"mount --rbind {path}")


OVERLAY = "\x01"
"""Before each of a layer's three paths (root, upper, work) in ``MASKS``: mount an overlay on the
root, before anything is masked (:func:`overlay`)."""
LATE = "\x02"
"""Before a Landlock rule in ``MASKS`` (its rights in decimal, then its absolute path): added once the overlays are mounted."""


def hide(fd: int) -> list[tuple[int, str]]:
    """Enter a namespace of this process's own and mount what ``fd``'s listing says: the overlays,
    then the masks and holds over them. Returns the rules to add to the ruleset now (:func:`add_rules`)."""
    with os.fdopen(fd, "rb") as f:
        paths = [os.fsdecode(p) for p in f.read().split(b"\0") if p]
    enter_namespace()  # with nothing to hide too: the program's PID namespace needs it (alone)
    layers = [p[len(OVERLAY) :] for p in paths if p.startswith(OVERLAY)]
    late = [(int(rights), "/" + path) for rights, _, path in (p[len(LATE) :].partition("/") for p in paths if p.startswith(LATE))]
    listed = [p for p in paths if not p.startswith((OVERLAY, LATE))]
    for i in range(0, len(layers), 3):
        overlay(*layers[i : i + 3])
    if listed:
        tree = empty_tree()
        try:
            for path in listed:
                if path.startswith(HOLD):
                    hold(path[len(HOLD) :])
                else:
                    as_listed(path)
                    mask(tree, path)
        finally:
            os.close(tree)
    if layers or listed:
        # The working directory was entered before the mounts: enter it again through them.
        os.chdir(os.getcwd())
    return late


def overlay(root: str, upper: str, work: str) -> None:
    """Mount an overlay on ``root``, ``root`` its lower layer: what the program writes there lands in ``upper``.

    ``userxattr``: in a user namespace the overlay marks opaque directories with ``user.`` extended
    attributes (it cannot write ``trusted.`` ones), and with it renaming a directory of the root
    fails with ``EXDEV`` (programs copy then), so the upper never holds a redirect."""
    options = f"lowerdir={root},upperdir={upper},workdir={work},userxattr"
    _check(_libc.mount(b"overlay", os.fsencode(root), b"overlay", 0, os.fsencode(options)), f"mount overlay {root}")


def add_rules(ruleset: int, rules: list[tuple[int, str]]) -> None:
    """Add to ``ruleset`` a rule for each (rights, path), opened now: beneath an overlay, a rule
    the server made on the root's own directory sits on a mount point hidden under the overlay,
    which Landlock never reaches from the view."""

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    for rights, path in rules:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a grant allows, it never requires
        try:
            if os.readlink(f"/proc/self/fd/{target}") != path:
                continue  # a link swapped in on the way (by another program, another call): the rule would grant its target
            if not stat.S_ISDIR(os.fstat(target).st_mode):
                rights &= FILE_RIGHTS
            if rights:
                rule = PathBeneath(rights, target)
                _check(_libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0), f"landlock_add_rule {path}")
        finally:
            os.close(target)


def probe_overlay() -> int:
    """0 when an overlay mounts in this launcher's user namespace here (``--probe-overlay``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as top:
        for name in ("lower", "upper", "work"):
            os.mkdir(os.path.join(top, name))
        pid = os.fork()
        if pid == 0:
            try:
                enter_namespace()
                overlay(*(os.path.join(top, name) for name in ("lower", "upper", "work")))
            except OSError:
                os._exit(1)
            os._exit(0)
        _, code = os.waitpid(pid, 0)
        if os.path.exists(made := os.path.join(top, "work", "work")):
            os.chmod(made, 0o700)  # the overlay leaves it mode 000
        return 0 if os.waitstatus_to_exitcode(code) == 0 else 1


ORPHANED = signal.SIGUSR1
"""What a forked launcher gets when the launcher that forked it ends (the server's end)."""


def _orphaned(signum: int = ORPHANED, frame: object = None) -> None:
    """The server is gone: this launcher's process group goes (itself, the program and all it
    started; without a PID namespace they cannot leave the group, the seccomp filter refuses
    ``setsid`` and ``setpgid``; with one, its first process is in the group and takes the rest)."""
    os.killpg(0, signal.SIGKILL)


def _ignore(signum: int, frame: object) -> None:
    """The waiters share the launcher's process group, which the server signals (a timeout), and
    may be signalled by the program: they only wait (in a PID namespace the first process passes
    the server's on, :func:`alone`)."""


def _undumpable() -> None:
    """Keep the program out of the processes that wait for it, which hold the pipe its end is
    reported on: as root of its user namespace it passes their ownership check, and could take
    that pipe (``pidfd_getfd``, ``/proc/PID/fd``) or trace them to forge its end. A process that
    is not dumpable is reached so only with ``CAP_SYS_PTRACE`` in the namespace its memory was
    made in (the server's, outside). The program is dumpable again from its exec. After
    :func:`enter_namespace`, which writes this process's id maps (a process that is not dumpable
    has its ``/proc`` files owned by root)."""
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


def _deaf() -> dict[int, object]:
    """Make this process, about to fork a program and wait for it, deaf to the signals the
    program may send it (it can name its namespace's first process, PID 1; without a namespace,
    its parent): before the fork, since a loaded machine may run the program first. Returns the
    handlers as they were, which the program gets back (:func:`_hearing`)."""
    return {each: signal.signal(each, _ignore) for each in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)}


def _hearing(handlers: dict[int, object]) -> None:
    for each, handler in handlers.items():
        signal.signal(each, handler)  # type: ignore[arg-type]


def _waiting(status: str) -> None:
    if status != "-":
        os.close(int(status))  # only the program's exec closes the server's pipe


def alone(status: str) -> None:
    """Start the program as the second process of a PID namespace of its own; return in it.

    A process the program leaves behind, even one that left its process group (``setsid``),
    would outlive its call and its place in the server's order (:class:`fsmcp.paths.change.Order`), and see
    what the server changes afterwards. The namespace's first process waits for the program and
    then ends, and with it the kernel ends every process left in the namespace. The launcher
    waits for that first process and ends as the program ended (its status, or its signal).
    Needs the user namespace :func:`enter_namespace` made.
    """
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    _undumpable()
    result, report = os.pipe()
    handlers = _deaf()
    first = os.fork()
    if first:
        os.close(report)
        _waiting(status)
        _, code = os.waitpid(first, 0)
        told = os.read(result, 4)
        _end_as(int.from_bytes(told, "little") if len(told) == 4 else code)
    os.close(result)
    _drop_report()  # the waiter above writes it: the namespace's processes hold it not
    # The namespace's first process gets from its namespace only the signals it handles: not this one.
    signal.signal(ORPHANED, signal.SIG_DFL)
    # The server's signals (a timeout's SIGTERM) reach this process, not the program, which has a
    # session of its own below: taken one by one, they are passed on to the program's group when
    # they come from outside the namespace (no sender's id in it), and the program's own ignored.
    passed = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, passed | {signal.SIGCHLD})
    program = os.fork()
    if program:
        _waiting(status)
        while True:
            info = signal.sigwaitinfo(passed | {signal.SIGCHLD})
            if info.si_signo != signal.SIGCHLD:
                if info.si_pid == 0:
                    try:
                        os.killpg(program, info.si_signo)
                    except ProcessLookupError:
                        pass
                continue
            while True:  # the namespace's orphans are this process's to reap
                try:
                    pid, code = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid == program:
                    os.write(report, code.to_bytes(4, "little"))
                    os._exit(0)
    os.close(report)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    _hearing(handlers)
    # A session of its own: what it signals as its process group (kill 0) is its own, never the
    # group of the processes that wait for it (the server's kill of that group ends the namespace).
    os.setsid()


def kept(status: str) -> None:
    """Where no PID namespace can be made (no user namespace): start the program as a child of
    the launcher, made its subreaper, and return in it. What the program leaves behind, a
    process that left its group included, becomes the launcher's child when its parent ends;
    once the program has ended the launcher kills each of them, then ends as the program ended.
    """
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")
    _undumpable()
    me = os.getpid()
    try:  # opened before the program runs: nothing it does to this process's limits stops the reading
        children = os.open(f"/proc/{me}/task/{me}/children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN: what is left lives on
        children = -1
    handlers = _deaf()
    program = os.fork()
    if program == 0:
        if children >= 0:
            os.close(children)
        _drop_report()
        _hearing(handlers)
        return
    _waiting(status)
    code: int | None = None
    killed: set[bytes] = set()
    while True:
        try:
            pid, ended = os.waitpid(-1, 0)
        except ChildProcessError:
            _end_as(code or 0)
        killed.discard(str(pid).encode())  # reaped: its number may come back as another's
        if pid == program and code is None:  # a leftover may get the program's number once it is reaped
            code = ended
        if code is not None and children >= 0:  # the program has ended: whatever is left (or reparented since) goes
            # Each once: a program that leaves thousands would otherwise be killed again at each reaping.
            for each in set(_read_all(children).split()) - killed:
                killed.add(each)
                try:
                    os.kill(int(each), signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.pread(fd, 1 << 16, len(data)):
        data += chunk
    return data


def _drop_report() -> None:
    global _report
    if _report is not None:
        os.close(_report)
        _report = None


def _end_as(code: int) -> None:
    """End as the program ended: its exit status, or its signal (``code``, a wait status).

    A launcher forked by :func:`serve` writes it to the server instead, and ends.
    """
    if _report is not None:
        os.write(_report, code.to_bytes(4, "little"))
        os._exit(0)
    if os.WIFSIGNALED(code):
        signal.signal(os.WTERMSIG(code), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(code))
    os._exit(os.waitstatus_to_exitcode(code) if os.WIFEXITED(code) else 127)


def probe() -> int:
    """0 when this system lets the launcher hide files (user namespaces allowed, tmpfs mountable in one)."""
    try:
        enter_namespace()
        os.close(empty_tree())
    except OSError:
        return 1
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe"]:
        return probe()
    if argv[1:] == ["--probe-overlay"]:
        return probe_overlay()
    if argv[1:2] == ["--serve"]:
        return serve(int(argv[2]), int(argv[3]))
    ruleset, masks, status, program, args = argv[1], argv[2], argv[3], argv[4], argv[5:]
    if status != "-":
        os.set_inheritable(int(status), False)  # closed by the exec: the server reads the end of it
    return start(ruleset, masks, status, program, args, dict(os.environ))


def start(ruleset: str, masks: str, status: str, program: str, args: list[str], env: dict[str, str]) -> int:
    """Confine this process and become ``program`` (with the environment ``env``); return the
    exit status of a launcher that could not."""
    try:
        late: list[tuple[int, str]] = []
        if masks not in ("-", NO_LINKS):
            late = hide(int(masks))
        else:
            kept(status)  # before the ruleset: the launcher stays outside it, to read /proc
        if ruleset != "-":
            add_rules(int(ruleset), late)
            confine(int(ruleset))
        if masks == NO_LINKS:
            forbid_links()
        if masks not in ("-", NO_LINKS):
            forbid_mount_api()
            alone(status)
    except (OSError, KeyError) as exc:  # KeyError: a machine whose call numbers are not known here
        if isinstance(exc, KeyError):
            exc = OSError(0, "hard links cannot be refused on this machine", os.uname().machine)
        why = f"it could not be confined ({exc.filename}: {exc.strerror})"
        if status != "-":
            os.write(int(status), why.encode())
        print(f"fsmcp: {program} was not started: {why}", file=sys.stderr)
        return CANNOT_CONFINE
    for each in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them, and an ignored signal stays so in the program
        signal.signal(each, signal.SIG_DFL)
    try:
        os.execve(program, args, env)
    except OSError as exc:
        print(f"fsmcp: {program} could not be started: {exc.strerror}", file=sys.stderr)
        return CANNOT_CONFINE if exc.errno == 13 else 127
    return 127  # not reached: execve returns only by raising


def serve(control: int, server: int) -> int:
    """Start programs for the server ``server`` (a process id), one for each request read from
    the socket ``control``, until the server closes its end or ends.

    This process stays as it started (not confined, no namespace, one thread): for each
    request it forks a launcher, which does what :func:`main` does for a program of its own
    interpreter, in the same order, and so holds what the module's docstring says. A request is
    one message on the socket carrying its descriptors (:data:`REQUEST_FDS`) and nothing else:
    what to run is read from the request's descriptor (NUL-separated: the program, the working
    directory, ``MASKS`` as :func:`main` takes it, the number of arguments, the arguments, then
    the environment's ``NAME=value``). The forked launcher writes its process id to the report
    pipe once it leads a session of its own (the server kills that process group), then the
    program's end as a wait status (:func:`_end_as`); it was never started if the pipe closes
    before the id (a first id of 0 is followed by an ``errno``: the fork failed, or the request could not be read).
    """
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != server:
        return 0  # the server ended before the line above: nobody is left to serve
    import array
    import socket

    # Each forked launcher reports its program's end itself; the kernel reaps it.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server's, whose end ends this one
    channel = socket.socket(fileno=control)
    space = socket.CMSG_SPACE((REQUEST_FDS + 1) * 4)
    while True:
        try:
            data, ancillary, _, _ = channel.recvmsg(1, space, socket.MSG_CMSG_CLOEXEC)
        except ConnectionResetError:
            return 0
        fds = array.array("i")
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        if not data and not fds:
            return 0  # the server closed its end: it ended, or is ending
        if len(fds) in (REQUEST_FDS, REQUEST_FDS + 1):
            try:
                request = _request(fds[0])
                pid = os.fork()
            except (OSError, ValueError) as exc:  # ValueError: a request not as the server writes them
                errno = exc.errno if isinstance(exc, OSError) and exc.errno else 22  # EINVAL
                os.write(fds[3], (0).to_bytes(4, "little") + errno.to_bytes(4, "little"))
            else:
                if pid == 0:
                    channel.close()
                    _forked(os.getppid(), list(fds), *request)
        for fd in fds:
            os.close(fd)


def _request(fd: int) -> tuple[str, str, str, list[str], dict[str, str]]:
    """The program, working directory, ``MASKS``, arguments and environment a request names."""
    data = b""
    while chunk := os.pread(fd, 1 << 20, len(data)):
        data += chunk
    fields = [os.fsdecode(each) for each in data.split(b"\0")]
    count = int(fields[3])
    env = dict(each.split("=", 1) for each in fields[4 + count :])
    return fields[0], fields[1], fields[2], fields[4 : 4 + count], _locale(env)


def _forked(serving: int, fds: list[int], program: str, cwd: str, masks: str, args: list[str], env: dict[str, str]) -> None:
    """In a launcher :func:`serve` (process ``serving``) forked: start the request's program, or
    report why not. Never returns."""
    global _report
    request, ruleset, status, _report, stdin, stdout, stderr, *listing = fds
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # SIG_IGN would pass through the exec
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code = 127
    try:
        os.setsid()  # first: the server kills this group from the moment it knows the id
        # A server killed outright kills nobody: its serving launcher dies with it (its death
        # signal), and this one then ends its whole group, the program's PID namespace with it.
        signal.signal(ORPHANED, _orphaned)
        _check(_libc.prctl(PR_SET_PDEATHSIG, ORPHANED, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
        if os.getppid() != serving:
            _orphaned()  # it ended before the line above
        os.write(_report, os.getpid().to_bytes(4, "little"))
        os.close(request)
        for target, fd in enumerate((stdin, stdout, stderr)):
            os.dup2(fd, target)
        for fd in {stdin, stdout, stderr}:
            if fd > 2:
                os.close(fd)
        try:
            os.chdir(cwd)
        except OSError as exc:  # the server raises it, as a failed start of its own would
            os.write(status, f"{ERRNO}{exc.errno}".encode())
            raise SystemExit from None
        if masks != NO_LINKS:
            masks = str(listing[0])
        code = start(str(ruleset), masks, str(status), program, args, env)
    except OSError as exc:
        print(f"fsmcp: {program} was not started: {exc.strerror}", file=sys.stderr)
    except SystemExit:
        pass
    finally:
        sys.stderr.flush()
        _end_as(code << 8)


LOCALE_VARIABLES = ("LC_CTYPE", "LANG", "LOCPATH")
"""With ``LC_ALL`` unset, what decides the character type's locale."""
_coerced: dict[tuple[str | None, ...], str | None] = {}


def _locale(env: dict[str, str]) -> dict[str, str]:
    """``env`` as the program got it from a launcher interpreter of its own, which (PEP 538) sets
    ``LC_CTYPE`` to a UTF-8 locale where ``env`` leaves the character type the C locale."""
    if env.get("LC_ALL"):
        return env
    key = tuple(env.get(name) for name in LOCALE_VARIABLES)
    if key not in _coerced:
        _coerced[key] = _coercion(key)
    target = _coerced[key]
    return env if target is None else {**env, "LC_CTYPE": target}


def _coercion(key: tuple[str | None, ...]) -> str | None:
    """What a new interpreter whose environment holds ``key`` sets ``LC_CTYPE`` to, if anything."""
    os.environ.pop("LC_ALL", None)
    for name, value in zip(LOCALE_VARIABLES, key):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value  # what setlocale reads
    _libc.setlocale.restype = ctypes.c_char_p
    LC_CTYPE = 0  # glibc's
    _libc.setlocale(LC_CTYPE, b"C")  # where a new process starts, and stays if env names no installed locale
    _libc.setlocale(LC_CTYPE, b"")
    if _libc.setlocale(LC_CTYPE, None) != b"C":
        return None
    return next((target for target in ("C.UTF-8", "C.utf8", "UTF-8") if _libc.setlocale(LC_CTYPE, target.encode())), None)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
