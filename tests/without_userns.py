"""``python without_userns.py ARGS...``: ``python ARGS...`` on a system that allows no user namespace.

A seccomp filter (inherited by every process started after it) makes ``unshare`` fail with
EPERM, as it does where ``user.max_user_namespaces`` is 0 or a security module refuses user
namespaces to the caller; every other system call is left alone. The server's own probe,
unchanged, then finds it cannot mount, and every program it starts is confined by Landlock alone.
"""

import errno
import os
import sys

from without_landlock import deny

SYS_UNSHARE = {"x86_64": 272, "aarch64": 97}[os.uname().machine]


def prepare() -> None:
    """This process and every one it starts from here on: as on a system that allows no user
    namespace (what ``fsmcp.testing`` calls in a server it forks for ``under=``)."""
    deny(SYS_UNSHARE, errno.EPERM)


if __name__ == "__main__":
    prepare()
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
