"""Coverage-guided fuzzing (atheris) of everything that judges hostile input: see README.md.

    uv run python fuzz/fuzz.py {paths|patch|jsregex|ecmascript|archive} [libFuzzer options] [corpus]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import anyio
    import fsmcp_archive.hooks
    from fsmcp_edit.jsregex import compile_js
    from fsmcp_patch.fence import unfence
    from fsmcp_patch.parse import parse
    from fsmcp_search.ecmascript import to_ripgrep

    from fsmcp import ErrorCode, ToolError
    from fsmcp.testing import host_for

CANARY = "CANARY-fuzz-outside"
TOP = Path(tempfile.mkdtemp(prefix="fsmcp-fuzz-")).resolve()
ROOT, OUTSIDE = TOP / "root", TOP / "outside"
PIECES = ["a", "b", "..", ".", "", "link", "out", "secret.txt", str(ROOT), str(OUTSIDE), "~", "\x00", "é", "C:"]


def world() -> None:
    for d in (ROOT, OUTSIDE):
        shutil.rmtree(d, ignore_errors=True)
        (d / "a" / "b").mkdir(parents=True)
        (d / "secret.txt").write_text(CANARY if d == OUTSIDE else "inside")
    (ROOT / "link").symlink_to(OUTSIDE)
    (ROOT / "a" / "out").symlink_to("../../outside/secret.txt")
    (ROOT / "a" / "b" / "up").symlink_to("../..")


def outside_state() -> list[tuple[str, bytes]]:
    return [(str(p), p.read_bytes() if p.is_file() else b"") for p in sorted(OUTSIDE.rglob("*"))]


world()
FS = host_for([ROOT]).fs
CLEAN = outside_state()


def path_from(fdp: atheris.FuzzedDataProvider) -> str:
    return "/".join(PIECES[fdp.ConsumeIntInRange(0, len(PIECES) - 1)] for _ in range(fdp.ConsumeIntInRange(1, 5)))


def fuzz_paths(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    ops: list[Callable[[str, str], object]] = [
        lambda p, o: FS.read_bytes(p), lambda p, o: FS.stat(p), lambda p, o: FS.kind(p, follow_links=False),
        lambda p, o: FS.list_dir(p), lambda p, o: list(FS.walk(p)), lambda p, o: FS.readlink(p),
        lambda p, o: FS.write_atomic(p, b"w"), lambda p, o: FS.append(p, b"a", create=True), lambda p, o: FS.mkdir(p),
        lambda p, o: FS.remove(p, recursive=True), lambda p, o: FS.rename(p, o, overwrite=True),
        lambda p, o: FS.copy(p, o, overwrite=True), FS.symlink, lambda p, o: FS.chmod(p, 0o755),
    ]  # fmt: skip
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        op = ops[fdp.ConsumeIntInRange(0, len(ops) - 1)]
        path, other = path_from(fdp), path_from(fdp)
        try:
            result = op(path, other)
        except ToolError:
            continue
        if CANARY in repr(result):
            raise AssertionError(f"read outside: {path!r} -> {result!r}")
    if outside_state() != CLEAN:
        raise AssertionError("changed outside")
    world()


def fuzz_patch(data: bytes) -> None:
    try:
        parse(unfence(data.decode("utf-8", "replace")))
    except ToolError as exc:
        if exc.code not in (ErrorCode.INVALID_PARAMS, ErrorCode.PATCH_FAILED):
            raise


def fuzz_jsregex(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    try:
        compile_js(fdp.ConsumeUnicodeNoSurrogates(64), ignore_case=fdp.ConsumeBool(), dot_all=fdp.ConsumeBool())
    except ToolError as exc:
        if exc.code is not ErrorCode.INVALID_PARAMS:
            raise


def fuzz_ecmascript(data: bytes) -> None:
    try:
        to_ripgrep(atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(64))
    except ToolError as exc:
        if exc.code is not ErrorCode.INVALID_PARAMS:
            raise


ARCHIVE_HOST = host_for([ROOT], [("archive", fsmcp_archive.hooks)])


def fuzz_archive(data: bytes) -> None:
    (ROOT / "in.bin").write_bytes(data)
    for name, args in (("list_archive", {"archive": "in.bin"}), ("extract_archive", {"archive": "in.bin", "destination": "x"})):
        outcome = anyio.run(ARCHIVE_HOST.runner.run, name, args)
        if isinstance(outcome, ToolError) and outcome.code is ErrorCode.INTERNAL_ERROR:
            raise AssertionError(f"{name}: {outcome}")
    if outside_state() != CLEAN:
        raise AssertionError("changed outside")
    shutil.rmtree(ROOT / "x", ignore_errors=True)


TARGETS = {"paths": fuzz_paths, "patch": fuzz_patch, "jsregex": fuzz_jsregex, "ecmascript": fuzz_ecmascript, "archive": fuzz_archive}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: fuzz.py {{{'|'.join(TARGETS)}}} [atheris/libFuzzer options and corpus directories]")
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
