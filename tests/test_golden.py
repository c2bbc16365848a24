"""Every answer a client sees, byte for byte as recorded: `initialize`, `tools/list` and 200 tool calls.

The real ``python -m fsmcp serve`` runs over stdio, driven by the ``mcp`` SDK's own ``Client``
through a stdio transport of this module's (``_stdio``) that keeps every line the server writes
as it came: the recording in ``tests/golden/answers.json`` holds, per request, the request and
the server's exact lines (its answer, and any notification sent before it). A change that moves
one byte of a tool definition, a result or an error text fails here, naming the call.

Three servers run one after the other on one fixture tree the test builds in ``tmp_path``
(their journal in the test's own ``XDG_STATE_HOME``): ``main`` (a read-write root and a
read-only one, the text format) takes most calls, ``readonly`` (``--read-only``) and ``json``
(``--format json``) a few. The calls run in order, each from the state the calls before it
left; where a call needs the tree in a given state, a named step (``_prep``) puts it there
first, and is recorded beside the call.

Normalised, because it cannot be the same between runs, and nothing else (``_normal``):

- the fixture tree's absolute path, written ``<TMP>``;
- times: every fixture file gets the fixed mtime ``MTIME`` (``os.utime``), shown as it is; a
  file a call creates gets it too (step ``touch REL``) where the next answer shows its mtime.
  Any other time (when a tool changed a file in ``list_changes`` and ``undo_change``, the ctime
  a stale-write refusal names), and every last access ``get_file_info`` shows (a read moves it
  or not, by the file system's mount options), is ``<TIME>``;
- a file's version (a hash of its device, inode, size, mtime and ctime), ``<VERSION>``; a call
  that passes one back takes it from the answer before (``{version}``).

Environment: the servers start with ``LANG=LC_ALL=C.UTF-8``, ``TZ=UTC`` and umask 022, and the
fixture's modes are set explicitly; no answer shows what differs between machines (user names,
a directory's size, which depends on the file system, an absolute link target's length), and
programs run only where their output does not (``cat``, ``wc``, ``grep``: never ``rg`` or
``awk``, whose presence varies). On a kernel without Landlock the servers run with
``--sandbox off``, so that the same tools are offered (no call here depends on what the sandbox
adds).

Recording: ``FSMCP_RECORD_GOLDEN=1 uv run pytest tests/test_golden.py`` rewrites the recording
(and fails, saying so, so that a recording run is never taken for a pass). Record only on code
whose answers are the reference (issue 30: the code before the refactoring).
"""

from __future__ import annotations

import base64
import difflib
import io
import json
import os
import re
import sys
import tarfile
import zipfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.shared.message import SessionMessage

from fsmcp.sandbox import landlock
from fsmcp.testing import text_of

GOLDEN = Path(__file__).resolve().parent / "golden" / "answers.json"
RECORD = os.environ.get("FSMCP_RECORD_GOLDEN") == "1"
MTIME = 1_700_000_000  # 2023-11-14 22:13:20 UTC, every fixture file's
_FIXED = "2023-11-14T22:13:20"  # MTIME as the answers write it (UTC)
_VOLATILE = [
    # A file's last access (get_file_info), whatever it is: whether a read moves it depends on
    # the file system's mount options.
    (re.compile(r'(accessed: |accessed\\?":\\?")[0-9T:.Z-]+'), r"\1<TIME>"),
    # Any time but MTIME: when a tool changed a file (list_changes, undo_change), the ctime a
    # stale-write refusal names.
    (re.compile(rf"(?!{_FIXED})\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), "<TIME>"),
    # A file's version: a hash of its device, inode, size, mtime and ctime.
    # (in the json format's text, a JSON string inside the line's JSON, it is version\":\")
    (re.compile(r'(version: |version\\?":\\?"|at version )[0-9a-f]{16}'), r"\1<VERSION>"),
]
_VERSION = re.compile(r'version: ([0-9a-f]{16})')


# -- the transport: the SDK's client over stdio, every line kept -----------------------------


@asynccontextmanager
async def _stdio(argv: list[str], env: dict[str, str], lines: list[str], errors: Path) -> AsyncIterator[tuple[Any, Any]]:
    """Streams for ``mcp.Client`` to a server process, as the SDK's ``stdio_client`` makes them,
    that append each line the server writes to ``lines`` before handing it to the client."""
    with errors.open("wb") as stderr:
        process = await anyio.open_process(argv, env=env, stderr=stderr, umask=0o022)
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](0)

        async def read() -> None:
            async with to_client:
                buffer = b""
                async for chunk in process.stdout:  # type: ignore[union-attr]
                    *complete, buffer = (buffer + chunk).split(b"\n")
                    for line in complete:
                        lines.append(line.decode())
                        await to_client.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))

        async def write() -> None:
            async with from_client:
                async for message in from_client:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(write)
            try:
                yield client_reads, client_writes
            finally:
                await process.stdin.aclose()  # type: ignore[union-attr]
                with anyio.fail_after(60):
                    await process.wait()
                tg.cancel_scope.cancel()


# -- the fixture tree ------------------------------------------------------------------------

NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "cells": [
        {"cell_type": "markdown", "id": "intro001", "metadata": {}, "source": ["# Title\n", "Some text."]},
        {
            "cell_type": "code",
            "id": "code0001",
            "metadata": {},
            "execution_count": 1,
            "source": ["x = 1\n", "print(x)"],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}],
        },
        {"cell_type": "code", "id": "code0002", "metadata": {}, "execution_count": None, "source": "y = 2", "outputs": []},
    ],
}
# nbformat 4.4 has no cell ids: an inserted cell gets none, so its answer is the same every run.
OLD_NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 4,
    "metadata": {},
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "source": "a = 1", "outputs": []}],
}

APP_PY = '''"""The app."""

import os

LIMIT = 10


class Greeter:
    """Says hello."""

    def __init__(self, name):
        self.name = name

    def greet(self):
        return f"hello {self.name}"


def main():
    print(Greeter(os.environ.get("USER", "you")).greet())
'''

NOTES_MD = """# Notes

Intro line.

## Setup

Install it.

## Usage

Run it.
"""

UTIL_JS = """export function add(a, b) {
  return a + b;
}

export class Box {
  constructor(v) { this.v = v; }
  get() { return this.v; }
}
"""

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def build(top: Path) -> None:
    """The fixture tree: ``root`` (read-write), ``ro`` (read-only), ``outside`` (no root)."""
    root, ro, outside = top / "root", top / "ro", top / "outside"
    files = {
        "a.txt": "alpha\n",
        "b.txt": "one\ntwo\nthree\n",
        "dup.txt": "x = 1\nx = 1\nend\n",
        "crlf.txt": "first\r\nsecond\r\n",
        "lines.txt": "".join(f"line {i}\n" for i in range(1, 41)),
        "notes.md": NOTES_MD,
        "src/app.py": APP_PY,
        "src/util.js": UTIL_JS,
        "src/pkg/__init__.py": "",
        "src/pkg/mod.py": "def helper():\n    return 42\n",
        "data/config.json": '{"name": "demo", "debug": false}\n',
        "data/values.csv": "k,v\na,1\nb,2\n",
        "docs/guide.txt": "Read the guide.\nTODO: finish it\n",
        "build/out.txt": "built\n",
        ".gitignore": "build/\n",
        ".env": "SECRET=hunter2\n",
        "keys/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n",
        "empty.txt": "",
        "patchme/p.txt": "one\ntwo\nthree\nfour\n",
        "patchme/q.txt": "alpha\nbeta\n",
        "edits/e1.txt": "name = old\nvalue = 1\n",
        "edits/e2.txt": "name = old\nvalue = 2\n",
        "history/h.txt": "version 1\n",
        "watched/w.txt": "watch me\n",
        "bulk/one.txt": "1\n",
        "bulk/two.txt": "2\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, newline="")
    (root / "img.png").write_bytes(PNG)
    (root / "bin.dat").write_bytes(bytes(range(256)))
    (root / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (root / "old.ipynb").write_text(json.dumps(OLD_NOTEBOOK, indent=1) + "\n")
    (root / "emptydir").mkdir()
    ro.mkdir()
    (ro / "r.txt").write_text("read only\n")
    outside.mkdir()
    (outside / "o.txt").write_text("outside\n")
    (root / "link-out").symlink_to("../outside/o.txt")  # relative: its size is the same in every tmp
    (root / "link-in").symlink_to("a.txt")
    # Archives with fixed member times, so their bytes are the same every run.
    with zipfile.ZipFile(root / "arch.zip", "w") as z:
        for name, data in [("z/one.txt", b"one\n"), ("z/two.txt", b"two two\n")]:
            z.writestr(zipfile.ZipInfo(name, date_time=(2023, 11, 14, 12, 0, 0)), data)
        z.writestr(zipfile.ZipInfo("../evil.txt", date_time=(2023, 11, 14, 12, 0, 0)), b"evil\n")
    with tarfile.open(root / "arch.tar", "w") as t:
        for name, data in [("t/a.txt", b"a\n"), ("t/b.txt", b"bb\n")]:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), MTIME, 0o644
            t.addfile(info, io.BytesIO(data))
    # Modes and times as every run has them, whatever this process's umask.
    for dirpath, dirnames, filenames in os.walk(top, topdown=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
            os.utime(path, (MTIME, MTIME), follow_symlinks=False)


def _prep(top: Path, step: str) -> None:
    """A named step that puts the tree in the state the next call needs (recorded with the call).

    ``touch REL``: the file gets the mtime ``MTIME``, so that the answer shows no time of today.
    ``changed_behind``: someone else changes ``b.txt``, which this session has read.
    """
    root = top / "root"
    if step.startswith("touch "):
        os.utime(root / step.removeprefix("touch "), (MTIME, MTIME))
    elif step == "changed_behind":
        (root / "b.txt").write_text("one\ntwo\nthree\nfour\n")
        os.utime(root / "b.txt", (MTIME, MTIME))
    else:
        raise AssertionError(f"no step {step!r}")


# -- the calls -------------------------------------------------------------------------------

Call = tuple[str, str, dict[str, Any]] | tuple[str, str, dict[str, Any], str]
"""(session, tool, arguments[, step]): ``{root}``, ``{ro}``, ``{out}`` in a string argument stand
for the roots' and the outside directory's absolute paths, ``{version}`` for the version the last
answer that showed one showed (``get_file_info``)."""


def calls() -> list[Call]:
    m, r, j = "main", "readonly", "json"
    return [
        # --- read_file
        (m, "read_file", {"path": "a.txt"}),
        (m, "read_file", {"path": "{root}/b.txt"}),
        (m, "read_file", {"path": "lines.txt", "head": 3}),
        (m, "read_file", {"path": "lines.txt", "tail": 2}),
        (m, "read_file", {"path": "lines.txt", "startLine": 5, "endLine": 7, "lineNumbers": True}),
        (m, "read_file", {"path": "lines.txt", "offset": 7, "length": 10}),
        (m, "read_file", {"path": "bin.dat", "encoding": "hex", "length": 16}),
        (m, "read_file", {"path": "img.png"}),
        (m, "read_file", {"path": "a.txt", "encoding": "base64"}),
        (m, "read_file", {"path": "crlf.txt"}),
        (m, "read_file", {"path": "empty.txt"}),
        (m, "read_file", {"path": "lines.txt", "maxBytes": 10}),
        (m, "read_file", {"path": "missing.txt"}),
        (m, "read_file", {"path": "src"}),
        (m, "read_file", {"path": "{out}/o.txt"}),
        (m, "read_file", {"path": "../outside/o.txt"}),
        (m, "read_file", {"path": "link-out"}),
        (m, "read_file", {"path": ".env"}),
        (m, "read_file", {"path": "{ro}/r.txt"}),
        (m, "read_file", {"path": "a\u0000.txt"}),
        (m, "read_file", {"path": 42}),
        (m, "read_file", {}),
        (m, "read_file", {"path": "a.txt", "colour": "red"}),
        (m, "read_file", {"path": "a.txt", "head": 0}),
        (m, "read_file", {"path": "a.txt", "head": "3"}),
        (m, "read_file", {"path": "a.txt", "encoding": "latin-1"}),
        (m, "read_file", {"path": "a.txt", "head": 2, "tail": 2}),
        (m, "read_file", {"path": "a.txt", "startLine": 1.5}),
        # --- read_multiple_files
        (m, "read_multiple_files", {"paths": ["a.txt", "b.txt"]}),
        (m, "read_multiple_files", {"paths": ["a.txt", "missing.txt", ".env", "{out}/o.txt"]}),
        (m, "read_multiple_files", {"paths": []}),
        (m, "read_multiple_files", {"paths": "a.txt"}),
        # --- list_directory, directory_tree, get_file_info, list_allowed_directories
        (m, "list_directory", {}),
        (m, "list_directory", {"path": "src", "recursive": True}),
        (m, "list_directory", {"path": "data", "sizes": True}),
        (m, "list_directory", {"path": ".", "maxResults": 3}),
        (m, "list_directory", {"path": ".", "recursive": True, "excludeGlobs": ["src", "docs/**"]}),
        (m, "list_directory", {"path": "a.txt"}),
        (m, "list_directory", {"path": "nothere"}),
        (m, "directory_tree", {"path": "src"}),
        (m, "directory_tree", {"path": ".", "depth": 1, "excludeGlobs": ["build"]}),
        (m, "directory_tree", {"path": "src", "depth": -1}),
        (m, "get_file_info", {"path": "a.txt"}),
        (m, "get_file_info", {"path": "data/values.csv"}),
        (m, "get_file_info", {"path": "link-in"}),
        (m, "get_file_info", {"path": "link-out"}),
        (m, "get_file_info", {"path": ".env"}),
        (m, "list_allowed_directories", {}),
        (m, "list_allowed_directories", {"extra": 1}),
        # --- search: grep_files, glob_search, search_files
        (m, "grep_files", {"regex": "TODO"}),
        (m, "grep_files", {"regex": "^def ", "directory": "src", "globs": ["*.py"]}),
        (m, "grep_files", {"regex": "HELLO", "caseInsensitive": True, "contextLines": 1}),
        (m, "grep_files", {"regex": "line 1\\d", "globs": ["lines.txt"], "maxResults": 3}),
        (m, "grep_files", {"regex": "hunter2"}),
        (m, "grep_files", {"regex": "(unclosed"}),
        (m, "grep_files", {"regex": "a(?=b)"}),
        (m, "grep_files", {"regex": "x", "contextLines": 51}),
        (m, "glob_search", {"globs": ["**/*.py"]}),
        (m, "glob_search", {"globs": ["*.txt"], "maxResults": 2}),
        (m, "glob_search", {"globs": ["**/*"], "directory": "src", "excludeGlobs": ["pkg"]}),
        (m, "glob_search", {"globs": ["{out}/*"]}),
        (m, "glob_search", {"globs": []}),
        (m, "search_files", {"nameContains": "APP"}),
        (m, "search_files", {"nameContains": ".txt", "directory": "docs"}),
        (m, "search_files", {"nameContains": "out", "includeIgnored": True}),
        (m, "search_files", {"nameContains": ""}),
        # --- outline, read_symbol
        (m, "outline", {"path": "src/app.py"}),
        (m, "outline", {"path": "src/app.py", "depth": 1}),
        (m, "outline", {"path": ["notes.md", "src/util.js"]}),
        (m, "outline", {"path": "data/values.csv"}),
        (m, "read_symbol", {"path": "src/app.py", "name": "Greeter.greet"}),
        (m, "read_symbol", {"path": "notes.md", "name": "Usage"}),
        (m, "read_symbol", {"path": "src/app.py", "name": "Nope"}),
        # --- notebook
        (m, "read_notebook", {"path": "nb.ipynb"}),
        (m, "read_notebook", {"path": "nb.ipynb", "cells": [1], "outputs": False}),
        (m, "read_notebook", {"path": "nb.ipynb", "cells": [9]}),
        (m, "edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "replace", "index": 2, "source": "y = 3"}], "dryRun": True}),
        (m, "edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "replace", "cellId": "code0002", "source": "y = 3"}]}),
        (m, "edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "move", "index": 2, "to": 0}, {"op": "delete", "cellId": "intro001"}]}),
        (m, "edit_notebook", {"path": "old.ipynb", "edits": [{"op": "insert", "source": "# new", "cellType": "markdown"}]}),
        (m, "edit_notebook", {"path": "nb.ipynb", "edits": [{"op": "delete", "index": 7}]}),
        (m, "read_notebook", {"path": "old.ipynb"}),
        # --- write_file, write_files, append_file, create_directory
        (m, "write_file", {"path": "new/deep/n.txt", "content": "new file\n"}),
        (m, "write_file", {"path": "a.txt", "content": "alpha\nbeta\n"}),
        (m, "write_file", {"path": "bin2.dat", "content": "AAEC", "encoding": "base64"}),
        (m, "write_file", {"path": "counted.txt", "content": "1\n2\n", "lineCount": 3}),
        (m, "write_file", {"path": "{ro}/r.txt", "content": "no"}),
        (m, "write_file", {"path": ".env", "content": "SECRET=changed\n"}),
        (m, "write_file", {"path": "src", "content": "no"}),
        (m, "write_file", {"path": "a.txt", "content": "x", "expectedVersion": "bogus"}),
        (m, "read_file", {"path": "b.txt"}),
        (m, "write_file", {"path": "b.txt", "content": "stale\n"}, "changed_behind"),
        (m, "read_file", {"path": "b.txt"}),
        (m, "write_file", {"path": "b.txt", "content": "fresh\n"}),
        (m, "write_files", {"files": [{"path": "w1.txt", "content": "w1\n"}, {"path": "w2.txt", "content": "w2\n"}]}),
        (m, "write_files", {"files": [{"path": "w3.txt", "content": "w3\n"}, {"path": "{out}/w4.txt", "content": "no"}]}),
        (m, "get_file_info", {"path": "w1.txt"}, "touch w1.txt"),
        (m, "write_file", {"path": "w1.txt", "content": "w1 again\n", "expectedVersion": "{version}"}),
        (m, "append_file", {"path": "a.txt", "content": "gamma"}),
        (m, "append_file", {"path": "a.txt", "content": "delta", "ensureNewline": False}),
        (m, "append_file", {"path": "fresh.txt", "content": "x"}),
        (m, "append_file", {"path": "fresh.txt", "content": "x", "create": True}),
        (m, "create_directory", {"path": "made/sub"}),
        (m, "create_directory", {"path": "made/sub"}),
        (m, "create_directory", {"path": "nope/sub", "recursive": False}),
        # --- copy_file, move_file, delete_file
        (m, "copy_file", {"source": "a.txt", "destination": "copies/a.txt"}),
        (m, "copy_file", {"source": "a.txt", "destination": "copies/a.txt"}),
        (m, "copy_file", {"source": "src", "destination": "copies/src"}),
        (m, "copy_file", {"source": "link-out", "destination": "copies/link-out"}),
        (m, "copy_file", {"source": ".env", "destination": "env-copy"}),
        (m, "move_file", {"source": "copies/a.txt", "destination": "copies/moved.txt"}),
        (m, "move_file", {"source": "copies/moved.txt", "destination": "b.txt"}),
        (m, "move_file", {"source": "copies/moved.txt", "destination": "{ro}/moved.txt"}),
        (m, "delete_file", {"path": "copies/moved.txt"}),
        (m, "delete_file", {"path": "copies"}),
        (m, "delete_file", {"path": "copies", "recursive": True}),
        (m, "delete_file", {"path": ".env"}),
        # --- edit_file, edit_files
        (m, "edit_file", {"path": "edits/e1.txt", "edits": [{"oldText": "old", "newText": "new"}]}),
        (m, "edit_file", {"path": "edits/e1.txt", "edits": [{"oldText": "value = 1", "newText": "value = 9"}], "dryRun": True}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "x = 1", "newText": "x = 2", "limit": 0}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "x = 2", "newText": "x = 3", "expectedOccurrences": 3}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "absent", "newText": "y"}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "x = (\\d)", "newText": "x = $1$1", "isRegex": True, "limit": 0}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"type": "line", "lineNumber": 1, "action": "insert", "content": "# top"}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"type": "line", "lineNumber": -1, "action": "delete"}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "X = 22", "newText": "z", "caseInsensitive": True, "nearLine": 3, "limit": 1}]}),
        (m, "edit_file", {"path": ".env", "edits": [{"oldText": "SECRET", "newText": "X"}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"type": "line", "lineNumber": 99, "action": "delete"}]}),
        (m, "edit_file", {"path": "dup.txt", "edits": [{"oldText": "a", "limit": -1}]}),
        (m, "edit_files", {"paths": ["edits/*.txt"], "edits": [{"oldText": "value", "newText": "val"}], "dryRun": True}),
        (m, "edit_files", {"paths": ["edits/e1.txt", "edits/e2.txt"], "edits": [{"oldText": "name = old", "newText": "name = N"}], "atomic": True}),
        (m, "edit_files", {"paths": ["edits/*.txt"], "edits": [{"oldText": "value = 2", "newText": "v2"}]}),
        # --- patch_apply: unified diff, apply_patch, SEARCH/REPLACE
        (m, "patch_apply", {"path": "patchme", "patch": "--- a/p.txt\n+++ b/p.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+TWO\n three\n four\n"}),
        (m, "patch_apply", {"path": "patchme", "dryRun": True, "patch": "--- a/q.txt\n+++ b/q.txt\n@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma\n"}),
        (m, "patch_apply", {"path": "patchme", "patch": "--- a/p.txt\n+++ b/p.txt\n@@ -1,2 +1,2 @@\n one\n-nothere\n+x\n"}),
        (m, "patch_apply", {"path": "patchme", "patch": "*** Begin Patch\n*** Update File: q.txt\n@@\n alpha\n-beta\n+BETA\n*** Add File: added.txt\n+added line\n*** End Patch\n"}),
        (m, "patch_apply", {"path": "patchme/p.txt", "patch": "<<<<<<< SEARCH\nthree\n=======\nTHREE\n>>>>>>> REPLACE\n"}),
        (m, "patch_apply", {"path": "patchme", "patch": "--- a/../../outside/o.txt\n+++ b/../../outside/o.txt\n@@ -1 +1 @@\n-outside\n+owned\n"}),
        (m, "patch_apply", {"path": "patchme", "patch": "not a patch at all"}),
        # --- archives
        (m, "list_archive", {"archive": "arch.zip"}),
        (m, "list_archive", {"archive": "arch.tar", "offset": 1}),
        (m, "list_archive", {"archive": "a.txt"}),
        (m, "extract_archive", {"archive": "arch.tar", "destination": "unpacked"}),
        (m, "extract_archive", {"archive": "arch.tar", "destination": "unpacked"}),
        (m, "extract_archive", {"archive": "arch.zip", "destination": "unzipped"}),
        (m, "compress_files", {"paths": ["src/pkg"], "output": "out/pkg.zip"}),
        (m, "compress_files", {"paths": ["src/pkg"], "output": "out/pkg.zip"}),
        (m, "compress_files", {"paths": ["data", "a.txt"], "output": "out/two.tar"}),
        (m, "list_archive", {"archive": "out/two.tar"}),
        (m, "compress_files", {"paths": [".env"], "output": "out/env.zip"}),
        (m, "compress_files", {"paths": ["a.txt"], "output": "out/x.zip", "format": "tar.gz"}),
        # --- run_command
        (m, "run_command", {"command": "cat", "args": ["a.txt"]}),
        (m, "run_command", {"command": "wc", "args": ["-l", "lines.txt"]}),
        (m, "run_command", {"command": "grep", "args": ["-rn", "TODO", "docs"]}),
        (m, "run_command", {"command": "false"}),
        (m, "run_command", {"command": "cat", "args": ["missing.txt"]}),
        (m, "run_command", {"command": "cat", "args": [".env"]}),
        (m, "run_command", {"command": "rm", "args": ["a.txt"]}),
        (m, "run_command", {"command": "/bin/cat", "args": ["a.txt"]}),
        (m, "run_command", {"command": "find", "args": [".", "-name", "*.md", "-delete"]}),
        (m, "run_command", {"command": "cat", "args": ["a.txt"], "timeout": 0}),
        # --- batch_operations
        (m, "batch_operations", {"operations": [{"type": "read", "arguments": {"path": "a.txt"}}, {"tool": "get_file_info", "arguments": {"path": "data/config.json"}}]}),
        (m, "batch_operations", {"operations": [{"type": "write", "arguments": {"path": "bt/1.txt", "content": "1"}}, {"type": "copy", "arguments": {"source": "bt/1.txt", "destination": "bt/2.txt"}}]}),
        (m, "batch_operations", {"transactional": True, "operations": [{"type": "write", "arguments": {"path": "bt/3.txt", "content": "3"}}, {"type": "delete", "arguments": {"path": "missing.txt"}}]}),
        (m, "batch_operations", {"operations": [{"type": "delete", "arguments": {"path": "missing.txt"}, "continueOnError": True}, {"type": "read", "arguments": {"path": "bt/1.txt"}}]}),
        (m, "batch_operations", {"operations": [{"tool": "batch_operations", "arguments": {"operations": []}}]}),
        (m, "batch_operations", {"transactional": True, "operations": [{"tool": "run_command", "arguments": {"command": "true"}}]}),
        (m, "batch_operations", {"parallel": True, "operations": [{"type": "read", "arguments": {"path": "a.txt"}}, {"type": "read", "arguments": {"path": "bt/2.txt"}}]}),
        # --- history: list_changes, undo_change
        (m, "list_changes", {"path": "history"}),
        (m, "write_file", {"path": "history/h.txt", "content": "version 2\n"}),
        (m, "append_file", {"path": "history/h.txt", "content": "more"}),
        (m, "list_changes", {"path": "history"}),
        (m, "undo_change", {}),
        (m, "read_file", {"path": "history/h.txt"}),
        (m, "list_changes", {"path": "history", "limit": 2}),
        (m, "undo_change", {"id": 9999}),
        # --- watch_file
        (m, "watch_file", {"path": "watched", "since": 0}),
        (m, "watch_file", {"path": "watched", "recursive": True, "events": ["create", "delete"], "since": 1_800_000_000_000}),
        (m, "watch_file", {"path": "missing-dir", "since": 0}),
        # --- word_count (the plugin template, which the test session installs)
        (m, "word_count", {"path": "lines.txt"}),
        (m, "word_count", {"file": "notes.md"}),
        # --- set_workspace (last in main: it moves relative paths)
        (m, "set_workspace", {"path": "src"}),
        (m, "read_file", {"path": "pkg/mod.py"}),
        (m, "set_workspace", {"path": "{out}"}),
        (m, "set_workspace", {"path": "{ro}"}),
        (m, "read_file", {"path": "r.txt"}),
        # --- unknown tools, in each server
        (m, "launch_rockets", {}),
        (r, "read_file", {"path": "a.txt"}),
        (r, "write_file", {"path": "a.txt", "content": "no"}),
        (r, "run_command", {"command": "touch", "args": ["t.txt"]}),
        (r, "run_command", {"command": "cat", "args": ["a.txt"]}),
        (r, "batch_operations", {"operations": [{"type": "delete", "arguments": {"path": "a.txt"}}]}),
        (j, "read_file", {"path": "a.txt"}),
        (j, "read_file", {"path": "missing.txt"}),
        (j, "write_file", {"path": "j.txt", "content": "j\n"}),
        (j, "edit_file", {"path": "j.txt", "edits": [{"oldText": "j", "newText": "k"}]}),
        (j, "get_file_info", {"path": "j.txt"}, "touch j.txt"),
        (j, "read_file", {"path": 7}),
        (j, "nope", {}),
    ]


SESSIONS = {
    "main": ["{root}", "{ro}:ro"],
    "readonly": ["{root}", "--read-only"],
    "json": ["{root}", "--format", "json"],
}


def _fill(value: Any, paths: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, path in paths.items():
            value = value.replace(f"{{{key}}}", path)
        return value
    if isinstance(value, list):
        return [_fill(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, paths) for k, v in value.items()}
    return value


def _normal(line: str, top: Path) -> str:
    line = line.replace(str(top), "<TMP>")
    for pattern, token in _VOLATILE:
        line = pattern.sub(token, line)
    return line


async def _run(top: Path) -> list[dict[str, Any]]:
    """Every session and call in order: the recording's entries."""
    paths = {"root": str(top / "root"), "ro": str(top / "ro"), "out": str(top / "outside")}
    env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"}
    sandbox = [] if landlock.abi() > 0 else ["--sandbox", "off"]
    entries: list[dict[str, Any]] = []
    version = ""  # the last version get_file_info reported: "{version}" in an argument
    plan = calls()
    for session, serve_args in SESSIONS.items():
        lines: list[str] = []
        argv = [sys.executable, "-m", "fsmcp", "serve", *_fill(serve_args, paths), *sandbox]

        def take(call: dict[str, Any]) -> None:
            entries.append({"session": session, **call, "wire": [_normal(line, top) for line in lines]})
            lines.clear()

        async with Client(_stdio(argv, env, lines, top / f"{session}.stderr"), mode="legacy") as client:
            take({"request": "initialize"})
            await client.list_tools()
            take({"request": "tools/list"})
            for call in plan:
                if call[0] != session:
                    continue
                _, tool, arguments, *step = call
                if step:
                    _prep(top, step[0])
                result = await client.call_tool(tool, _fill(arguments, {**paths, "version": version}))
                take({"request": "tools/call", "tool": tool, "arguments": arguments, **({"prep": step[0]} if step else {})})
                if found := _VERSION.search(text_of(result)):
                    version = found.group(1)
    return entries


def _pretty(entry: dict[str, Any]) -> str:
    return "\n".join(json.dumps(json.loads(line), indent=1, ensure_ascii=False) for line in entry["wire"])


@pytest.mark.anyio
async def test_every_answer_is_as_recorded(tmp_path):
    top = tmp_path.resolve() / "tree"
    top.mkdir()
    build(top)
    got = await _run(top)
    if RECORD:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
        pytest.fail(f"recorded {len(got)} answers in {GOLDEN} (FSMCP_RECORD_GOLDEN=1): run again without it to compare")
    want = json.loads(GOLDEN.read_text())
    assert [{k: v for k, v in e.items() if k != "wire"} for e in got] == [{k: v for k, v in e.items() if k != "wire"} for e in want], "the calls changed: record again"
    for mine, theirs in zip(got, want):
        if mine["wire"] != theirs["wire"]:
            diff = "\n".join(difflib.unified_diff(_pretty(theirs).splitlines(), _pretty(mine).splitlines(), "recorded", "now", lineterm=""))
            raise AssertionError(f"{mine['session']}: {mine['request']} {mine.get('tool', '')} {json.dumps(mine.get('arguments'))} answers otherwise:\n{diff}")


def test_the_recording_has_200_calls_and_every_tool():
    recorded = json.loads(GOLDEN.read_text())
    tool_calls = [e for e in recorded if e["request"] == "tools/call"]
    assert len(tool_calls) == 200
    offered = {t["name"] for e in recorded if e["request"] == "tools/list" and e["session"] == "main" for t in json.loads(e["wire"][-1])["result"]["tools"]}
    assert offered <= {e["tool"] for e in tool_calls}
