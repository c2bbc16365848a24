"""The launcher every confined program starts through: ``python -I -S launch.py FD PROGRAM ARGV0 ARGS...``.

It runs as a fresh, single-threaded interpreter, so what it does between the server's
``fork`` and the program's ``exec`` is plain code, not a ``preexec_fn`` in a copy of a threaded
server (where a lock held by another thread at the fork would be held forever). The server has
built the Landlock ruleset already and hands it over as descriptor ``FD``; here only the two
calls that must be made by the process being confined are left: ``no_new_privs`` (which
Landlock requires of an unprivileged caller, and which keeps set-user-ID programs from
regaining what the ruleset takes away) and ``landlock_restrict_self``. Then ``exec``: the
program starts already inside the ruleset, as do all its children.

Standard library only, and nothing imported that is not needed: this file is run by path with
``-S``, and every millisecond here is added to every program the server starts.
"""

import ctypes
import os
import sys

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
"""The same numbers on every architecture: the three calls came after the tables were unified."""
PR_SET_NO_NEW_PRIVS = 38
CANNOT_CONFINE = 126
"""Exit status when the program was not started because it could not be confined."""


def confine(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, fd, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(fd)


def main(argv: list[str]) -> int:
    fd, program, args = int(argv[1]), argv[2], argv[3:]
    try:
        confine(fd)
    except OSError as exc:
        print(f"fsmcp: {program} was not started: it could not be confined ({exc.filename}: {exc.strerror})", file=sys.stderr)
        return CANNOT_CONFINE
    try:
        os.execv(program, args)
    except OSError as exc:
        print(f"fsmcp: {program} could not be started: {exc.strerror}", file=sys.stderr)
        return CANNOT_CONFINE if exc.errno == 13 else 127
    return 127  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv))
