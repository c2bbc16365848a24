"""``fsmcp_around_call``: a third party wraps calls as the host's audit log and consent do."""

from __future__ import annotations

import json

import pytest
from mcp import types

from fsmcp import ErrorCode, ToolError, hookimpl
from fsmcp.run.runner import NotNow
from fsmcp.testing import connect, host_for, text_of

pytestmark = pytest.mark.anyio

SECRET = "TOKEN=s3cret-around"


@pytest.fixture
def root(tmp_path):
    top = tmp_path / "root"
    top.mkdir()
    (top / ".env").write_text(SECRET)
    (top / "a.txt").write_text("hello")
    return top


class Hours:
    """The sketch of docs/hooks.md, with the clock fixed: outside office hours."""

    def __init__(self) -> None:
        self.wrapped: list[str] = []
        self.runs = 0

    @hookimpl
    def fsmcp_around_call(self, call):
        if call.tool is None or call.tool.annotations.read_only:
            return None
        self.wrapped.append(call.name)

        async def around(run):
            return ToolError(ErrorCode.ACCESS_DENIED, f"{call.name} changes files, which this server allows from 8:00 to 18:00")

        return around


class Counter:
    """Wraps every call: counts the calls it saw and the rounds it ran."""

    def __init__(self) -> None:
        self.calls = 0
        self.rounds = 0

    @hookimpl
    def fsmcp_around_call(self, call):
        async def around(run):
            self.calls += 1
            outcome = await run()
            self.rounds += 1
            return outcome

        return around


async def test_a_wrapper_may_answer_in_place_of_the_tool_and_leave_other_calls_alone(root):
    hours = Hours()
    host = host_for([root], [("hours", hours)], entry_points=True, enable=["read", "write", "hours"])
    refused = await host.runner.call("write_file", {"path": "b.txt", "content": "x"})
    read = await host.runner.call("read_file", {"path": "a.txt"})
    assert refused == {"content": [{"type": "text", "text": "ACCESS_DENIED: write_file changes files, which this server allows from 8:00 to 18:00"}], "isError": True}
    assert not (root / "b.txt").exists()
    assert not read.get("isError") and "hello" in text_of(types.CallToolResult.model_validate(read))
    assert hours.wrapped == ["write_file"]


async def test_a_call_no_plugin_wraps_is_answered_at_once_and_one_wrapped_is_not(root):
    counter = Counter()
    plain = host_for([root], entry_points=True, enable=["read"])
    wrapped = host_for([root], [("counter", counter)], entry_points=True, enable=["read", "counter"])
    assert plain.runner.call_now("read_file", {"path": "a.txt"}) == await plain.runner.call("read_file", {"path": "a.txt"})
    not_now = wrapped.runner.call_now("read_file", {"path": "a.txt"})
    assert isinstance(not_now, NotNow) and len(not_now.arounds) == 1  # not answered: call() goes on with it
    assert counter.calls == 0
    assert await wrapped.runner.call("read_file", {"path": "a.txt"}, not_now=not_now) == await plain.runner.call("read_file", {"path": "a.txt"})
    assert (counter.calls, counter.rounds) == (1, 1)


async def test_the_audit_log_is_outermost_and_consent_next_to_the_tool(root, tmp_path):
    counter = Counter()
    log = tmp_path / "audit.jsonl"
    host = host_for([root], [("counter", counter)], entry_points=True, enable=["read", "counter"], audit_log=str(log))
    asked = []

    async def user(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "allow_once"})

    async with connect(host, elicitation_callback=user) as client:
        result = await client.call_tool("read_file", {"path": ".env"})
    assert not result.is_error and SECRET in text_of(result)
    assert len(asked) == 1
    # Consent ran the call twice (refused, then allowed); the wrapper outside it saw one call,
    # and the audit log outside both wrote one line.
    assert (counter.calls, counter.rounds) == (1, 1)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["outcome"] == "ok" and lines[0]["allowedOnce"] == [str((root / ".env").resolve())]


async def test_audit_and_consent_are_listed_and_disabled_as_plugins(root, tmp_path):
    log = tmp_path / "audit.jsonl"
    status = {info.name: info.status for info in host_for([root], audit_log=str(log)).plugins}
    assert status["fsmcp.audit"] == status["fsmcp.consent"] == "default"
    unlogged = host_for([root])  # no log named, none kept: listed, and why it is off
    assert not unlogged.pm.has_plugin("fsmcp.audit")
    assert {(i.status, i.why) for i in unlogged.plugins if i.name == "fsmcp.audit"} == {("disabled", "no audit_log (--audit-log FILE)")}

    host = host_for([root], entry_points=True, enable=["read"], audit_log=str(log), disable=["fsmcp.audit", "fsmcp.consent"])
    status = {info.name: info.status for info in host.plugins}
    assert status["fsmcp.audit"] == status["fsmcp.consent"] == "disabled"
    asked = []

    async def user(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "allow_once"})

    async with connect(host, elicitation_callback=user) as client:
        result = await client.call_tool("read_file", {"path": ".env"})
    assert result.is_error and text_of(result).startswith("ACCESS_DENIED: '.env' is refused: ")
    assert asked == []
    assert log.read_text() == ""  # made by the first host, which served no call; the second wrote nothing


def test_consent_is_not_registered_where_the_operator_lets_nobody_be_asked(root):
    # ask_user = false: consent would only answer at every call that it asks nobody.
    asks = host_for([root], entry_points=True, enable=["read"])
    quiet = host_for([root], entry_points=True, enable=["read"], ask_user=False)
    assert asks.pm.has_plugin("fsmcp.consent") and not quiet.pm.has_plugin("fsmcp.consent")
    assert {(p.status, p.why) for p in quiet.plugins if p.name == "fsmcp.consent"} == {("disabled", "ask_user = false (--no-ask)")}
