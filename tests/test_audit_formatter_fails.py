"""The audit line's outcome is the call's true outcome: a call whose result the configured
formatter (a plugin's ``fsmcp_format_result``) fails to make reaches the client as the
transport's internal error, and its line must not say ``ok``."""

from __future__ import annotations

import json
from pathlib import Path

import fsmcp_write.hooks
import pytest

from fsmcp import hookimpl
from fsmcp.testing import connect, host_for


def lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


class BrokenFormat:
    """A formatter with a bug: it fails on write_file's results."""

    @hookimpl(tryfirst=True)
    def fsmcp_format_result(self, tool, outcome, format, settings):
        if tool is not None and tool.name == "write_file":
            raise RuntimeError("a bug in a formatter")
        return {"content": [{"type": "text", "text": "formatted"}]}


@pytest.mark.anyio
async def test_a_call_whose_result_the_formatter_fails_to_make_is_not_logged_ok(tmp_path):
    log = tmp_path / "audit.log"
    root = tmp_path / "root"
    root.mkdir()
    host = host_for([root], [("write", fsmcp_write.hooks), ("fmt", BrokenFormat())], audit_log=str(log))
    async with connect(host) as client:
        with pytest.raises(Exception, match="Internal error") as raised:
            await client.call_tool("write_file", {"path": "a.txt", "content": "x"})
    got = lines(log)
    print("client got:", raised.value)
    print("log:", [(line["tool"], line["outcome"]) for line in got])
    assert len(got) == 1 and got[0]["outcome"] != "ok", got
