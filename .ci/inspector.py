"""Drive `fsmcp serve` with the MCP Inspector's CLI, a client nobody here wrote, and check what it prints.

Installs @modelcontextprotocol/inspector from the npm registry into a temporary directory.
Exits 0 with a clear message (and checks nothing) only when npm cannot reach the registry.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = "@modelcontextprotocol/inspector"


def main() -> int:
    if shutil.which("npm") is None:
        print("inspector: SKIPPED - npm is not installed, so the MCP Inspector cannot be run")
        return 0
    work = Path(tempfile.mkdtemp(prefix="fsmcp-inspector-"))
    try:
        install = subprocess.run(["npm", "install", "--silent", "--prefix", str(work / "npm"), PACKAGE], capture_output=True, text=True, timeout=600)
        if install.returncode != 0:
            print(f"inspector: SKIPPED - npm could not install {PACKAGE}:\n{install.stderr[-2000:]}")
            return 0
        inspector = work / "npm" / "node_modules" / ".bin" / "mcp-inspector"
        root = work / "root"
        (root / "docs").mkdir(parents=True)
        (root / "docs" / "hello.txt").write_text("hello from the inspector\n")
        server = [sys.executable, "-m", "fsmcp", "serve", str(root)]

        def run(*method_args: str) -> dict:
            out = subprocess.run([str(inspector), "--cli", *server, *method_args], capture_output=True, text=True, timeout=120)
            if out.returncode != 0:
                raise SystemExit(f"inspector: FAILED {' '.join(method_args)}\n{out.stdout}\n{out.stderr}")
            return json.loads(out.stdout)

        def call(tool: str, **args: str) -> dict:
            flat = [a for k, v in args.items() for a in ("--tool-arg", f"{k}={v}")]
            return run("--method", "tools/call", "--tool-name", tool, *flat)

        tools = {t["name"]: t for t in run("--method", "tools/list")["tools"]}
        expected = {"read_file", "write_file", "list_directory", "edit_file", "grep_files", "list_allowed_directories"}
        assert expected <= set(tools), f"tools/list lacks {expected - set(tools)}"
        assert tools["read_file"]["annotations"]["readOnlyHint"] is True
        assert tools["read_file"]["inputSchema"]["required"] == ["path"]

        read = call("read_file", path="docs/hello.txt")
        assert read["isError"] is False and read["content"][0]["text"] == "hello from the inspector\n", read
        wrote = call("write_file", path="docs/new.txt", content="written by the inspector")
        assert wrote["isError"] is False, wrote
        assert (root / "docs" / "new.txt").read_text() == "written by the inspector"
        listing = call("list_directory", path="docs")
        assert "[FILE] hello.txt" in listing["content"][0]["text"] and "[FILE] new.txt" in listing["content"][0]["text"], listing
        grep = call("grep_files", regex="inspector", directory=str(root))
        assert "[2 matches]" in grep["content"][-1]["text"] or "2 matches" in json.dumps(grep), grep
        denied = call("read_file", path="../../etc/passwd")
        assert denied["isError"] is True and denied["content"][0]["text"].startswith("ACCESS_DENIED: "), denied
        print(f"inspector: passed - {len(tools)} tools listed; read_file, write_file, list_directory, grep_files and a refused read checked")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
