"""``python without_landlock.py ARGS...``: ``python ARGS...`` as on a kernel without Landlock.

A seccomp filter (inherited by every process started after it, as no_new_privs is) makes
``landlock_create_ruleset`` fail with ENOSYS, which is exactly what a kernel built without
Landlock answers; every other system call is left alone. So the server's own probe, unchanged
and with no switch for tests, finds ABI 0, and everything it does from there is what it does on
an older kernel.
"""

import ctypes
import errno
import os
import sys

SYS_LANDLOCK_CREATE_RULESET = 444  # the same on every architecture
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
LOAD_SYSCALL_NUMBER, JUMP_IF_EQUAL, RETURN = 0x20, 0x15, 0x06
RET_ERRNO, RET_ALLOW = 0x00050000, 0x7FFF0000


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def deny(syscall: int, error: int) -> None:
    """From here on, ``syscall`` fails with ``error`` in this process and every one it starts."""
    program = (_Instruction * 4)(
        _Instruction(LOAD_SYSCALL_NUMBER, 0, 0, 0),  # seccomp_data.nr is at offset 0
        _Instruction(JUMP_IF_EQUAL, 0, 1, syscall),
        _Instruction(RETURN, 0, 0, RET_ERRNO | error),
        _Instruction(RETURN, 0, 0, RET_ALLOW),
    )
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    fprog = _Program(len(program), program)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def prepare() -> None:
    """This process and every one it starts from here on: as on a kernel without Landlock (what
    ``fsmcp.testing`` calls in a server it forks for ``under=``)."""
    deny(SYS_LANDLOCK_CREATE_RULESET, errno.ENOSYS)


if __name__ == "__main__":
    prepare()
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
