"""A file's birth time, which os.stat does not give on Linux: statx(2) through the C library."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import struct
import threading

_STATX_BTIME = 0x800
_AT_SYMLINK_NOFOLLOW = 0x100
_BTIME_OFFSET = 80  # struct statx: stx_btime follows 64 bytes of fields and stx_atime
_U32 = struct.Struct("<I")
_BTIME = struct.Struct("<qI")
_local = threading.local()


@functools.cache
def _statx():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.statx
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function


def birth_ns(dir_fd: int, name: str) -> int | None:
    """When ``name`` in ``dir_fd`` was made (links not followed), in ns; None where unknown."""
    statx = _statx()
    if statx is None:
        return None
    # One buffer per thread, read in place: every temporary file of a write asks (temporaries.py).
    buf = getattr(_local, "buf", None)
    if buf is None:
        buf = _local.buf = ctypes.create_string_buffer(256)
    if statx(dir_fd, name.encode("utf-8", "surrogateescape"), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:
        return None
    if not _U32.unpack_from(buf, 0)[0] & _STATX_BTIME:
        return None  # the file system keeps no birth time
    seconds, nanos = _BTIME.unpack_from(buf, _BTIME_OFFSET)
    return seconds * 1_000_000_000 + nanos
