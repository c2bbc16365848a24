"""Asking the user before a refusal stands: ``fsmcp.Refusal`` and MCP elicitation.

The server runs as ``fsmcp serve`` over stdio, driven by the SDK's own client; the refusals are
the default secrets policy's, which asks about reads. Over HTTP: test_http.py.
"""

import json
import os
import select
import subprocess
import sys

import anyio
import pytest
from mcp import types

from fsmcp import Access, Refusal
from fsmcp.builtin.secrets import refusal
from fsmcp.testing import forked, serve_stdio, text_of

SECRET = "TOKEN=s3cret-c0ns3nt"
READ = refusal(".env", Access.READ)
"""The secrets policy's reason for refusing a read (the same for every file)."""


@pytest.fixture
def root(tmp_path):
    top = tmp_path / "root"
    top.mkdir()
    (top / ".env").write_text(SECRET)
    (top / "id_rsa").write_text("PRIVATE-KEY-BYTES")
    (top / "plain.txt").write_text("PLAIN-BYTES")
    (top / "a.txt").write_text("hello")
    return top


ASKTEST = '''
from fsmcp import hookimpl


@hookimpl
def fsmcp_check_path(path):
    if path.path.name == "plain.txt":
        return "keys are off limits"
    return None
'''


@pytest.fixture
def asktest(tmp_path):
    """The environment of a server that finds the veto plugin ``asktest`` by its entry point.

    It refuses ``plain.txt`` with a plain reason, which never asks.
    """
    site = tmp_path / "site"
    dist = site / "fsmcp_asktest-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "fsmcp_asktest.py").write_text(ASKTEST)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fsmcp-asktest\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[fsmcp]\nasktest = fsmcp_asktest\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}


class User:
    """The client's user: answers each question as told, and remembers what was asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context, params):
        self.asked.append(params)
        answer = self.answers.pop(0)
        if answer == "slow":
            await anyio.sleep(60)
        if answer in ("allow_once", "deny"):
            return types.ElicitResult(action="accept", content={"answer": answer})
        return types.ElicitResult(action=answer)


def lines_of(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_refusal_is_its_reason_and_carries_its_question():
    said = Refusal("the file holds secrets", ask="The agent wants to read .env")
    assert said == "the file holds secrets" and isinstance(said, str)
    assert said.ask == "The agent wants to read .env"
    assert Refusal("no").ask is None


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_allow_once_serves_the_file_for_that_call_only_and_is_audited(root, tmp_path, mode):
    user = User("allow_once", "deny")
    log = tmp_path / "audit.jsonl"
    args = ("--enable", "read", "--audit-log", str(log), str(root))
    async with serve_stdio(*args, mode=mode, elicitation_callback=user) as client:
        first = await client.call_tool("read_file", {"path": ".env"})
        again = await client.call_tool("read_file", {"path": ".env"})
    assert not first.is_error and SECRET in text_of(first)
    assert again.is_error and text_of(again) == f"ACCESS_DENIED: '.env' is refused: {READ}; the user was asked and declined."
    assert SECRET not in text_of(again)
    assert len(user.asked) == 2
    real = str((root / ".env").resolve())
    assert user.asked[0].message == f"The agent wants to read {root / '.env'}. Allow it this once, or deny?"
    assert user.asked[0].requested_schema["properties"]["answer"]["enum"] == ["allow_once", "deny"]
    lines = lines_of(log)
    allowed = [line for line in lines if line.get("allowedOnce")]
    assert len(allowed) == 1
    assert allowed[0]["allowedOnce"] == [real] and allowed[0]["tool"] == "read_file" and allowed[0]["outcome"] == "ok"
    assert lines[-1]["refusedAfterAsking"] == [real] and lines[-1]["outcome"] == "ACCESS_DENIED"
    if mode == "auto":  # each round of a 2026-07-28 call is a request of its own, and a line
        assert [line["outcome"] for line in lines] == ["input_required", "ok", "input_required", "ACCESS_DENIED"]
        assert lines[0]["askingUser"] == [real]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_deny_leaves_the_refusal_saying_the_user_declined(root, mode):
    user = User("deny", "decline", "cancel")
    async with serve_stdio("--enable", "read", str(root), mode=mode, elicitation_callback=user) as client:
        denied = await client.call_tool("read_file", {"path": ".env"})
        declined = await client.call_tool("read_file", {"path": ".env"})
        cancelled = await client.call_tool("read_file", {"path": ".env"})
    assert text_of(denied) == f"ACCESS_DENIED: '.env' is refused: {READ}; the user was asked and declined."
    assert text_of(declined) == text_of(denied)
    assert text_of(cancelled) == f"ACCESS_DENIED: '.env' is refused: {READ}; the user was asked and dismissed the question."
    assert len(user.asked) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_without_elicitation_gets_the_refusal_and_no_request(root, mode):
    # Had the server asked, the SDK's client would have answered "Elicitation not supported"
    # (handshake era) or failed the call (2026-07-28): the plain refusal shows it did not.
    async with serve_stdio("--enable", "read", str(root), mode=mode) as client:
        result = await client.call_tool("read_file", {"path": ".env"})
    assert text_of(result) == f"ACCESS_DENIED: '.env' is refused: {READ}"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["flag", "file"])
async def test_asking_turned_off_refuses_without_asking(root, tmp_path, how):
    user = User("allow_once")
    if how == "flag":
        args = ["--no-ask"]
    else:
        (tmp_path / "fsmcp.toml").write_text("ask_user = false\n")
        args = ["--config", str(tmp_path / "fsmcp.toml")]
    async with serve_stdio(*args, "--enable", "read", str(root), elicitation_callback=user) as client:
        result = await client.call_tool("read_file", {"path": ".env"})
    assert text_of(result) == f"ACCESS_DENIED: '.env' is refused: {READ}"
    assert user.asked == []


@pytest.mark.anyio
async def test_writes_and_plain_refusals_never_ask(root, asktest):
    user = User()
    async with serve_stdio("--enable", "read,write,asktest", str(root), env=asktest, elicitation_callback=user) as client:
        write = await client.call_tool("write_file", {"path": ".env", "content": "PLANTED"})
        plain = await client.call_tool("read_file", {"path": "plain.txt"})
    assert text_of(write) == f"ACCESS_DENIED: '.env' is refused: {refusal('.env', Access.WRITE)}"
    assert text_of(plain) == "ACCESS_DENIED: 'plain.txt' is refused: keys are off limits"
    assert user.asked == []
    assert (root / ".env").read_text() == SECRET


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_several_refused_paths_in_one_call_are_asked_one_by_one(root, mode):
    user = User("allow_once", "deny")
    async with serve_stdio("--enable", "read", str(root), mode=mode, elicitation_callback=user) as client:
        result = await client.call_tool("read_multiple_files", {"paths": [".env", "a.txt", "id_rsa"]})
    text = text_of(result)
    assert SECRET in text and "hello" in text and "PRIVATE-KEY-BYTES" not in text
    assert f"'id_rsa' is refused: {READ}; the user was asked and declined." in text
    assert [p.message for p in user.asked] == [f"The agent wants to read {root / name}. Allow it this once, or deny?" for name in (".env", "id_rsa")]


@pytest.mark.anyio
async def test_an_unanswered_question_times_out_into_the_refusal(root, tmp_path):
    (tmp_path / "fsmcp.toml").write_text("ask_timeout = 0.5\n")
    user = User("slow")
    args = ("--config", str(tmp_path / "fsmcp.toml"), "--enable", "read", str(root))
    async with serve_stdio(*args, elicitation_callback=user) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("read_file", {"path": ".env"})
    assert text_of(result) == f"ACCESS_DENIED: '.env' is refused: {READ}; the user was asked and did not answer within 0.5 s."


def test_ask_settings_are_checked(tmp_path):
    def start(setting):
        (tmp_path / "fsmcp.toml").write_text(setting + "\n")
        command = forked("tools", "--config", str(tmp_path / "fsmcp.toml"), str(tmp_path))  # as python -m fsmcp, without its imports
        return subprocess.run(command, capture_output=True, text=True)

    for good in ("ask_user = false", "ask_timeout = 300", "ask_timeout = 0.5"):
        assert start(good).returncode == 0, (good, start(good).stderr)
    for bad, says in (("ask_user = 1", "ask_user must be true or false"), ("ask_timeout = 0", "ask_timeout must be a number of seconds"),
                      ('ask_timeout = "2m"', "ask_timeout must be a number of seconds")):
        done = start(bad)
        assert done.returncode == 2 and says in done.stderr, (bad, done.stderr)



class Raw:
    """``fsmcp serve`` spoken to line by line, as a client without the SDK would."""

    def __init__(self, root, *args):
        command = forked("serve", "--enable", "read", *args, str(root))
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self):
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        assert ready, "the server did not answer within 30 s"
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def test_2026_07_28_asks_with_input_required_and_takes_each_answer_once(root):
    server = Raw(root)
    read = {"name": "read_file", "arguments": {"path": ".env"}, "_meta": MODERN}
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": read})
        asked = server.receive()["result"]
        allow = {key: {"action": "accept", "content": {"answer": "allow_once"}} for key in asked.get("inputRequests", {})}
        answered = {**read, "inputResponses": allow, "requestState": asked.get("requestState")}
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": answered})
        served = server.receive()["result"]
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": answered})  # the same answer again
        replayed = server.receive()["result"]
        other = {**answered, "arguments": {"path": "./.env"}, "requestState": replayed.get("requestState")}
        server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": other})  # another call, the state of this one
        elsewhere = server.receive()["result"]
    finally:
        server.close()
    assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["fsmcp.ask.0"]
    question = asked["inputRequests"]["fsmcp.ask.0"]
    assert question["method"] == "elicitation/create" and question["params"]["mode"] == "form"
    assert question["params"]["message"] == f"The agent wants to read {root / '.env'}. Allow it this once, or deny?"
    assert question["params"]["requestedSchema"]["required"] == ["answer"]
    assert served["resultType"] == "complete" and served["content"][0]["text"] == SECRET
    assert replayed["resultType"] == "input_required" and SECRET not in json.dumps(replayed)
    assert elsewhere["resultType"] == "input_required" and SECRET not in json.dumps(elsewhere)


@pytest.mark.parametrize(("version", "mode"), [("2025-06-18", None), ("2025-11-25", "form")])
def test_the_handshake_era_sends_elicitation_create_during_the_call(root, version, mode):
    server = Raw(root)
    try:
        capabilities = {"elicitation": {}}
        server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}}})
        server.receive()
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": ".env"}}})
        question = server.receive()
        server.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"answer": "allow_once"}}})
        answer = server.receive()
    finally:
        server.close()
    assert question["method"] == "elicitation/create"
    assert question["params"].get("mode") == mode and question["params"]["requestedSchema"]["properties"]["answer"]["enum"] == ["allow_once", "deny"]
    assert answer["id"] == 1 and answer["result"]["content"][0]["text"] == SECRET


@pytest.mark.anyio
async def test_a_link_to_a_protected_file_is_asked_about_by_its_real_path(root):
    (root / "settings.txt").symlink_to(".env")
    user = User("allow_once")
    async with serve_stdio("--enable", "read", str(root), elicitation_callback=user) as client:
        result = await client.call_tool("read_file", {"path": "settings.txt"})
    assert text_of(result) == SECRET
    assert str((root / ".env").resolve()) in user.asked[0].message


@pytest.mark.anyio
async def test_one_call_asks_at_most_five_questions(root):
    names = [f"k{n}.pem" for n in range(7)]
    for name in names:
        (root / name).write_text(f"KEY-{name}")
    user = User(*["allow_once"] * 7)
    async with serve_stdio("--enable", "read", str(root), elicitation_callback=user) as client:
        result = await client.call_tool("read_multiple_files", {"paths": names})
    text = text_of(result)
    assert len(user.asked) == 5
    assert sum(f"KEY-{name}" in text for name in names) == 5
    assert text.count("the user was already asked 5 times in this call") == 2


class Swapper:
    """A user who, while being asked about ``sample/.env``, lets a second session swap ``prod`` in
    with two ``move_file`` calls (each directory keeps its ``.env`` under that name, which the
    secrets policy lets move), then answers "allow once"."""

    def __init__(self, mover):
        self.mover = mover
        self.asked = 0

    async def __call__(self, context, params):
        self.asked += 1
        for source, destination in (("sample", "sample.asked"), ("prod", "sample")):
            moved = await self.mover.call_tool("move_file", {"source": source, "destination": destination})
            assert not moved.is_error, text_of(moved)
        return types.ElicitResult(action="accept", content={"answer": "allow_once"})


def _swap_back(top):
    os.rename(top / "sample", top / "prod")
    os.rename(top / "sample.asked", top / "sample")


ROUNDS = 60


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_file_swapped_in_while_the_user_is_asked_is_refused(tmp_path, mode):
    top = tmp_path / "root"
    for name in ("sample", "prod"):
        (top / name).mkdir(parents=True)
        (top / name / ".env").write_text(f"PASSWORD={name}-password\n")
    config = tmp_path / "fsmcp.toml"
    config.write_text('[plugins.shell]\nallow = ["cat"]\n')
    args = ("--config", str(config), "--enable", "read,write,shell", "--sandbox", "require", str(top))
    leaks, refused = [], 0
    async with serve_stdio(*args) as mover:
        user = Swapper(mover)
        async with serve_stdio(*args, mode=mode, elicitation_callback=user) as client:
            for n in range(ROUNDS):
                tool, arguments = (("read_file", {"path": "sample/.env"}), ("run_command", {"command": "cat", "args": ["sample/.env"]}))[n % 2]
                result = await client.call_tool(tool, arguments)
                text = text_of(result)
                if "prod-password" in text:
                    leaks.append((tool, text))
                if result.is_error and "changed while the user was asked" in text and "call again" in text:
                    refused += 1
                _swap_back(top)
    print(f"{ROUNDS} rounds, {len(leaks)} leaks, {refused} refused as changed; first leak: {leaks[:1]}")
    assert user.asked == ROUNDS
    assert leaks == [] and refused == ROUNDS


@pytest.mark.anyio
async def test_the_file_asked_about_is_still_served_when_nothing_moved(tmp_path):
    top = tmp_path / "root"
    (top / "sample").mkdir(parents=True)
    (top / "sample" / ".env").write_text("PASSWORD=sample-password\n")
    (tmp_path / "fsmcp.toml").write_text('[plugins.shell]\nallow = ["cat"]\n')
    user = User("allow_once", "allow_once")
    args = ("--config", str(tmp_path / "fsmcp.toml"), "--enable", "read,shell", "--sandbox", "require", str(top))
    async with serve_stdio(*args, elicitation_callback=user) as client:
        read = await client.call_tool("read_file", {"path": "sample/.env"})
        ran = await client.call_tool("run_command", {"command": "cat", "args": ["sample/.env"]})
    assert text_of(read) == "PASSWORD=sample-password\n"
    assert "PASSWORD=sample-password" in text_of(ran) and not ran.is_error


@pytest.mark.parametrize("swap", ["before the ruleset is built", "after, before the program runs", "none"])
def test_a_program_reads_the_file_allowed_never_one_swapped_in_at_its_path(tmp_path, swap):
    """The kernel's side of allow once for a program (``Ruleset.pinned``): the file the user was
    asked about is granted by its inode, so a swap after the server's check, before or after the
    ruleset is built, shows the program nothing (the control, unpinned, shows it prod's file when
    the swap comes before the ruleset: the rules, on inodes, hold after)."""
    from fsmcp.sandbox import landlock, masks, programs
    from fsmcp.paths.consent import identity

    top = (tmp_path / "root").resolve()
    for name in ("sample", "prod"):
        (top / name).mkdir(parents=True)
        (top / name / ".env").write_text(f"PASSWORD={name}-password\n")
    path = str(top / "sample" / ".env")
    asked = identity(path)

    def run(pinned):
        # As the server builds it: every other protected file hidden (prod's .env), the allowed one
        # pinned, or (the control, as before) merely left out of the hidden ones.
        rules = landlock.Ruleset(landlock.abi(), hidden=frozenset({str(top / "prod" / ".env")}), pinned={path: asked} if pinned else {})
        rules.grant(top, landlock.RUN)
        rules.grant_each(programs.SYSTEM_DIRS, landlock.RUN)
        rules.grant_each(programs.ETC_FILES, landlock.READ_FILE)
        if swap == "before the ruleset is built":
            _swap(top)
        fd = rules.build()
        try:
            if swap == "after, before the program runs":
                _swap(top)
            command = [sys.executable, "-I", "-S", masks.LAUNCHER, str(fd), "-", "-", "/bin/cat", "cat", path]
            done = subprocess.run(command, pass_fds=(fd,), capture_output=True, text=True, timeout=60)
        finally:
            os.close(fd)
            if swap != "none":
                _swap_back(top)
        return done.stdout + done.stderr

    pinned, by_path = run(True), run(False)
    print(pinned, by_path, sep="\n")
    if swap == "none":
        assert pinned == by_path == "PASSWORD=sample-password\n"
    else:
        assert "prod-password" not in pinned and "Permission denied" in pinned
    if swap == "before the ruleset is built":
        assert "prod-password" in by_path  # the control: unpinned, the program reads prod's file


def _swap(top):
    os.rename(top / "sample", top / "sample.asked")
    os.rename(top / "prod", top / "sample")
