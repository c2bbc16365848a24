"""``python as_nobody.py ARGS...``: ``python ARGS...`` as the unprivileged user ``nobody``.

Run as root: the user and group become 65534, supplementary groups are dropped, and with the
user every capability goes (the kernel clears them on leaving user 0), so the server and every
program it starts run as an ordinary user would: its user namespaces are unprivileged ones.

The test environment's interpreter may live where only root can reach it (a pyenv build under
``/root``); then the system's interpreter of the same version runs instead, in a small
environment of its own under ``/tmp`` whose one ``.pth`` line adds this environment's packages.
"""

import hashlib
import os
import sys
import sysconfig

NOBODY = 65534
SYSTEM = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"


def _reachable(path: str) -> bool:
    pid = os.fork()
    if pid == 0:
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        os._exit(0 if os.access(path, os.X_OK) else 1)
    return os.waitpid(pid, 0)[1] == 0


def _shim() -> str:
    """An environment the system's interpreter runs in, reading this one's packages."""
    packages = sysconfig.get_paths()["purelib"]
    top = f"/tmp/fsmcp-nobody-{hashlib.sha256(packages.encode()).hexdigest()[:12]}"
    python = f"{top}/bin/python"
    if not os.path.exists(python):
        os.makedirs(f"{top}/bin", exist_ok=True)
        site = f"{top}/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
        os.makedirs(site, exist_ok=True)
        _place(f"{top}/pyvenv.cfg", f"home = {os.path.dirname(SYSTEM)}\ninclude-system-site-packages = false\n")
        _place(f"{site}/environment.pth", f"import site; site.addsitedir({packages!r})\n")
        for dirpath, _, _ in os.walk(top):
            os.chmod(dirpath, 0o755)
        new = f"{python}.{os.getpid()}"
        os.symlink(SYSTEM, new)
        os.replace(new, python)  # last: the interpreter there means the rest is in place
    return python


def _place(path: str, text: str) -> None:
    # Written aside, then renamed: test processes running at once (pytest-xdist's workers) may
    # build the shim together, and none may read a file another is halfway through writing.
    new = f"{path}.{os.getpid()}"
    with open(new, "w") as f:
        f.write(text)
    os.chmod(new, 0o644)
    os.replace(new, path)


if __name__ == "__main__":
    python = sys.executable if _reachable(sys.executable) else _shim()
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    os.execv(python, [python, *sys.argv[1:]])
