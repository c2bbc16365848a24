"""A floor for the small calls: the least a CPython stdio server does for them, beside the reference.

``floor.py serve ROOT`` is that server: ``get_file_info`` and ``read_file`` answered as fsmcp
answers them (the same text and structured fields), read by name after ``realpath`` in one
plain loop, answers of a read written together. It has no policy hooks, no secrets veto, no
descriptor walk, no argument models, no guard or journal: it is unsafe and serves nothing. What
it measures is what the interpreter, the pipes and the system calls cost, so that fsmcp's own
layers can be told from them. ``floor.py`` alone drives it and the reference server through
``ts_client.mjs`` and prints the same rows as ``perf.py`` (``bench/all.py floor``).
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
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


def serve(root: str) -> None:
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


def main() -> None:
    from mcp import StdioServerParameters

    import perf
    from common import print_table, reference_params

    perf.build()
    root = str(perf.FIXTURES)
    floor = StdioServerParameters(command=sys.executable, args=[__file__, "serve", root], env=dict(os.environ))
    paths = [str(perf.FIXTURES / "small" / f"note{i:02}.txt") for i in range(50)]
    ours, theirs = perf.ts_client([floor, reference_params(root)], paths, 5)
    title = "floor: a bare CPython loop (not fsmcp) beside the reference server, through the TypeScript SDK's client; medians of 5"
    print_table(title, perf.ts_rows(ours, theirs), measured="floor")


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    else:
        main()
