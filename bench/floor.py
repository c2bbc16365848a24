"""A floor for the small calls: the least a CPython stdio server does for them, beside the reference.

``floor.py serve ROOT`` is that server: ``get_file_info`` and ``read_file`` answered as fsmcp
answers them (the same text and structured fields), read by name after ``realpath`` in one
plain loop, answers of a read written together. It has no policy hooks, no secrets veto, no
descriptor walk, no argument models, no guard or journal: it is unsafe and serves nothing. What
it measures is what the interpreter, the pipes and the system calls cost, so that fsmcp's own
layers can be told from them.

``floor.py serve ROOT guarded`` is the same loop with fsmcp's own path layer put back: every
path goes through the host's ``PathPolicy.resolve`` (the policy hooks, the name walk, the secrets and
journal vetoes), is reached by the descriptor walk (``FileSystem.stat``, ``open_read``, with
the stale-write guard's record of what was read), and ``get_file_info``'s answer is checked
against its output model. Only the call's layers are left out: the stdio connection, argument
models, ``ToolContext``, the guard's call scope and the format hook. It measures how far a
leaner call layer could go without touching the security-critical path.

``floor.py`` alone drives both loops, fsmcp and the reference server in the same sessions of
``ts_client.mjs``, and prints the same rows as ``perf.py``: a table each for the two loops and
fsmcp, beside the reference (``bench/all.py floor``).
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from datetime import datetime, timezone

import orjson

PATH_ONLY = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TEXT = {"type": "string"}
INFO_SCHEMA = {
    "type": "object",
    "properties": {
        "path": TEXT, "type": {"enum": ["file", "directory", "symlink", "other"], "type": "string"}, "size": {"type": "integer"}, "created": TEXT,
        "modified": TEXT, "accessed": TEXT, "permissions": TEXT, "target": {"type": ["string", "null"]}, "version": TEXT,
    },
    "required": ["path", "type", "size", "created", "modified", "accessed", "permissions", "version"],
}
"""fsmcp's ``get_file_info`` output schema, which the client checks each answer against."""


def iso(timestamp: float) -> str:
    # fsmcp_read.get_file_info's, written out: the bare loop imports nothing of fsmcp.
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


def bare_calls(root: str) -> tuple:
    """``get_file_info`` and ``read_file`` by name after ``realpath``, and nothing more."""
    prefix = os.path.realpath(root) + "/"

    def inside(path: str) -> str:
        real = os.path.realpath(path)
        if not real.startswith(prefix):
            raise PermissionError(path)
        return real

    def get_file_info(path: str) -> dict:
        real = inside(path)
        st = os.lstat(real)
        facts = {
            "type": "file" if stat.S_ISREG(st.st_mode) else "other",
            "size": st.st_size,
            "created": "unknown",
            "modified": iso(st.st_mtime),
            "accessed": iso(st.st_atime),
            "permissions": f"{stat.S_IMODE(st.st_mode):03o}",
            "version": hashlib.blake2b(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode(), digest_size=8).hexdigest(),
        }
        text = "\n".join(f"{key}: {value}" for key, value in facts.items())
        return {"content": [{"type": "text", "text": text}], "isError": False, "structuredContent": {"path": real, **facts, "target": None}}

    def read_file(path: str) -> dict:
        fd = os.open(inside(path), os.O_RDONLY | os.O_NOFOLLOW)
        try:
            data = os.read(fd, 1 << 16)
        finally:
            os.close(fd)
        return {"content": [{"type": "text", "text": data.decode()}], "isError": False}

    return get_file_info, read_file


def serve(root: str, guarded: bool) -> None:
    get_file_info, read_file = guarded_calls(root) if guarded else bare_calls(root)
    tools = [
        {"name": "get_file_info", "description": "floor", "inputSchema": PATH_ONLY, "outputSchema": INFO_SCHEMA},
        {"name": "read_file", "description": "floor", "inputSchema": PATH_ONLY},
    ]
    calls = {"get_file_info": get_file_info, "read_file": read_file}

    def answer(message: dict) -> bytes | None:
        if "id" not in message:
            return None
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "floor", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            result = calls[params["name"]](params["arguments"]["path"])
        else:
            result = {}
        return orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + b"\n"

    pending = b""
    while chunk := os.read(0, 1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        answers = [a for a in (answer(orjson.loads(line)) for line in lines if line.strip()) if a]
        if answers:
            os.write(1, b"".join(answers))


def guarded_calls(root: str) -> tuple:
    """``get_file_info`` and ``read_file`` through fsmcp's path layer, as the read plugin's tools use it."""
    from fsmcp import Access, ToolResult, kind_of, version
    from fsmcp.api.config import build_settings
    from fsmcp.builtin.text_format import structured
    from fsmcp.paths.guard import Session, in_session
    from fsmcp.run.host import Host
    from fsmcp_read.get_file_info import iso

    host = Host.start(build_settings({}, {"roots": [root]}))
    tool = host.tools["get_file_info"]
    session = Session()

    def get_file_info(path: str) -> dict:
        p = host.fs.resolve(path, Access.READ, follow_links=False)
        st = host.fs.stat(p, follow_links=False)
        facts = {
            "type": kind_of(st.st_mode),
            "size": st.st_size,
            "created": "unknown",
            "modified": iso(st.st_mtime),
            "accessed": iso(st.st_atime),
            "permissions": f"{stat.S_IMODE(st.st_mode):03o}",
            "version": version(st),
        }
        text = "\n".join(f"{key}: {value}" for key, value in facts.items())
        checked = structured(tool, ToolResult.text(text, {"path": str(p), **facts}))
        return {"content": [{"type": "text", "text": text}], "isError": False, "structuredContent": checked}

    def read_file(path: str) -> dict:
        with in_session(session), host.fs.open_read(host.fs.resolve(path, Access.READ)) as fh:
            data = fh.read(1 << 16)
        return {"content": [{"type": "text", "text": data.decode()}], "isError": False}

    return get_file_info, read_file


def main() -> None:
    from mcp import StdioServerParameters

    import perf
    from common import fsmcp_params, print_table, reference_params

    perf.build()
    root = str(perf.FIXTURES)
    ours = fsmcp_params(root)
    floors = [StdioServerParameters(command=sys.executable, args=[__file__, "serve", root, *how], env=ours.env) for how in ([], ["guarded"])]
    paths = [str(perf.FIXTURES / "small" / f"note{i:02}.txt") for i in range(50)]
    bare, guarded, itself, theirs = perf.ts_client([*floors, ours, reference_params(root)], paths, 5)
    title = "floor: a bare CPython loop (not fsmcp) beside the reference server, through the TypeScript SDK's client; medians of 5"
    print_table(title, perf.ts_rows(bare, theirs), measured="floor")
    title = "the same loop through fsmcp's path layer (policy, vetoes, descriptor walk, output model), beside the same reference sessions"
    print_table(title, perf.ts_rows(guarded, theirs), measured="guarded")
    print_table("fsmcp itself, beside the same reference sessions", perf.ts_rows(itself, theirs))


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2], sys.argv[3:4] == ["guarded"])
    else:
        main()
