"""The stdio transport: MCP over stdin and stdout, spoken by the host itself.

Both protocol eras are served here without the ``mcp`` SDK, whose import alone takes longer
than Node takes to start the reference server, and whose per-message models cost more than the
tool calls they carry. The client's first request decides the era, by the rule the SDK applies:
``initialize`` opens the handshake era (2024-11-05 to 2025-11-25); a request whose ``_meta``
carries the 2026-07-28 envelope opens that era, in which every request carries the envelope,
every result says its ``resultType`` and the server's name, and the server sends no requests:
it asks for the client's roots with an ``input_required`` result instead of ``roots/list``.

Asking the user (``elicitation/create``, :mod:`fsmcp.paths.consent`) follows the same two ways: a
request to the client in the middle of the call in the handshake era, an ``input_required``
result whose answers come back with the client's next try of the same call in 2026-07-28.

A 2026-07-28 client that declares the tasks extension gets a task for a long tool's call
(:attr:`~fsmcp.api.tools.Tool.long`): the call answers at once with the task, runs on, and the
client polls ``tasks/get``, answers its questions with ``tasks/update`` and may ``tasks/cancel``
it; the task's state is kept in :mod:`fsmcp.serve.tasks`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from ..api import __version__
from . import shapes, tasks
from .client_roots import ClientRoots
from ..paths.consent import Consent, call_digest, elicits_forms, form
from ..api.jsontext import TOO_DEEP, too_deep
from .wire import TOO_LONG, PipeWire, Wire, max_message_bytes, too_long
from ..run.workers import WORKERS
from .request_state import StateRefused

if TYPE_CHECKING:
    from ..run.catalog import DeferredHost
    from ..paths.guard import Session
    from ..run.host import Host
    from ..run.runner import NotNow
    from .request_state import RequestStates, Resumed

log = logging.getLogger("fsmcp")

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era versions; a client asking ``initialize`` for another is offered the newest."""
MODERN_VERSIONS = ("2026-07-28",)
"""Versions of the per-request-envelope era."""
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
"""In ``params._meta`` of a 2026-07-28 request, and never in a handshake-era one."""
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
WORKSPACE_KEY = "io.github.fsmcp/workspace"
"""In ``_meta``: the workspace handle of a 2026-07-28 client (the directory ``set_workspace``
chose), sent back in each result's ``_meta`` while one is chosen, and taken from a request's
``_meta``, where it moves the workspace as ``set_workspace`` would, for that request."""
ROOTS_INPUT = "roots"
"""The key of the roots request in an ``input_required`` result, and of its answer."""
MAX_PARKED = 64
"""2026-07-28 calls waiting for their user's answers that one connection keeps, oldest dropped."""

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022
INTERNAL_MESSAGE = "Internal error: the server's log (stderr) has the details"
CLOSING_GRACE = 1.0
"""Seconds the calls in flight when a live client closes its input (its way to leave) have to
answer before they are cancelled."""
EXIT_GRACE = 1.0
"""Seconds the cancelled calls have to stop before the process exits without them."""
STOP_GRACE = 5.0
"""Seconds the calls in flight when SIGTERM or SIGINT comes have to finish and answer before they
are cancelled (as uvicorn gives them over HTTP): a write under way ends whole, not cut short."""
MAX_IN_FLIGHT = 64
"""Calls one connection runs at once (a stdio server's one connection: all it runs). Past it no
request is read until one ends: with the pause of stdin past ``PAUSE_BYTES`` and answers that
wait for the client to read them, a client that sends faster than it reads is held back by its
own pipe, whatever it calls. While a call waits for the client's answer (its roots, its user's),
four times as many run, so that the answer is read behind up to that many more requests."""
BATCH_VERSIONS = ("2025-03-26",)
"""The versions whose connections may send JSON-RPC batches: 2025-06-18 removed them."""

_batch: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar("batch", default=None)
"""Where the answers to the requests of a batch gather, to be sent as one array."""


class ClientError(Exception):
    """The client answered one of our requests with an error, or left before answering."""


class Refusal(Exception):
    """A request answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class TaskRun:
    """A task this process runs: its asyncio task, and its questions waiting for ``tasks/update``."""

    def __init__(self, record: dict[str, Any]):
        self.record = record
        self.task: asyncio.Task[None] | None = None
        self.waiting: set[str] = set()
        """The keys of the questions outstanding (``inputRequests``)."""
        self.responses: dict[str, Any] = {}
        self.answered: asyncio.Event = asyncio.Event()
        self.cancelled_by_client = False


class Connection:
    """One client: its era, its roots, the calls it may cancel."""

    def __init__(self, host: Host | DeferredHost, wire: Wire, states: RequestStates | None = None):
        self.host = host
        self.wire = wire
        self.states = states
        """Where 2026-07-28 calls waiting for their user's answers are sealed (HTTP, no memory
        between requests); None: they are parked in :attr:`parked`, for this connection."""
        self.roots_answer: Any = None
        """The client's latest answer to ``roots/list`` (2026-07-28): sealed with a call's state."""
        self.modern = False
        self.opened = False
        """Whether the era is set: by the first request, or a batch before it (a handshake connection's)."""
        self.tools = host.listing()
        self.server_info = {"name": "fsmcp", "version": __version__}
        self.roots = ClientRoots(host.roots)
        self.offers_roots = False
        self.elicits = False
        self.parked: dict[str, tuple[str, Consent]] = {}
        """2026-07-28 calls waiting for their user's answers, by the ``requestState`` they were sent."""
        self.version: str | None = None  # agreed by initialize; None before it, and in the 2026-07-28 era
        self.running: dict[Any, asyncio.Task[None]] = {}
        self.asked: dict[int, asyncio.Future[Any]] = {}
        self.last_id = 0
        self.closed = False
        self.gone = False
        self.serving: asyncio.Task[Any] | None = None
        self.room = asyncio.Event()
        """Set when a call ends or one of ours asks the client: the reading may go on."""
        self.tasks: dict[str, TaskRun] = {}
        """The tasks this connection started, by task ID."""

    async def serve(self, incoming: AsyncIterator[Any]) -> list[asyncio.Task[None]]:
        """Serve until the client leaves; the calls then still running, cancelled."""
        self.serving = asyncio.current_task()
        watch = asyncio.get_running_loop().create_task(self.watch_hang_up())
        try:
            async for message in incoming:
                await self.receive(message)
            self.closed = True
            for future in self.asked.values():
                if not future.done():
                    future.set_exception(ClientError("the client closed the connection"))
            # The calls still running finish and answer: the end of a file of requests, as in
            # `fsmcp serve < requests.jsonl`, is no client leaving. A live client that closes
            # its input is leaving (stdio's way to end a session), and may still read for a while.
            await self.drain(CLOSING_GRACE if self.wire.live else None)
        except asyncio.CancelledError:
            if not (self.gone or self.wire.stopped):
                raise
            if not self.gone:
                # Told to end: no new request is read; the calls in flight finish and answer.
                asyncio.current_task().uncancel()  # type: ignore[union-attr]
                if self.running:
                    log.warning("%s: no new request is read; %d call(s) in flight have %g s to finish", self.wire.stopped, len(self.running), STOP_GRACE)
                with contextlib.suppress(asyncio.CancelledError):  # a second signal waits no more
                    await self.drain(STOP_GRACE)
        finally:
            watch.cancel()
            for task in self.running.values():
                task.cancel()
        return list(self.running.values())

    def start(self, key: Any, task: asyncio.Task[None]) -> None:
        self.running[key] = task
        task.add_done_callback(lambda done: self.ended(key, done))

    def ended(self, key: Any, task: asyncio.Task[None]) -> None:
        if self.running.get(key) is task:
            del self.running[key]
        self.room.set()

    async def make_room(self) -> None:
        """Return once fewer than :data:`MAX_IN_FLIGHT` calls run (four times as many while one
        waits for the client's answer, which must be read)."""
        while len(self.running) >= (MAX_IN_FLIGHT * 4 if self.asked else MAX_IN_FLIGHT):
            self.room.clear()
            await self.room.wait()

    async def drain(self, grace: float | None) -> None:
        """Wait for the calls in flight, ``grace`` seconds at most (None: as long as they run)."""
        if self.running:
            await asyncio.wait(list(self.running.values()), timeout=grace)

    async def watch_hang_up(self) -> None:
        """A client that can no longer read the answers is gone, whatever its calls are doing."""
        await self.wire.hung_up()
        self.left()

    def left(self) -> None:
        """The client no longer reads: nobody is left to answer, so the connection ends."""
        self.gone = True
        if self.serving is not None:
            self.serving.cancel()

    async def receive(self, message: Any) -> None:
        if not self.opened and (isinstance(message, list) or isinstance(message, dict) and "method" in message and "id" in message):
            # The first request decides the era; a batch opens none, and is refused before initialize.
            self.opened = True
            self.modern = isinstance(message, dict) and message.get("method") != "initialize" and _enveloped(message.get("params"))
        if isinstance(message, list):
            await self.receive_batch(message)
            return
        if not isinstance(message, dict):
            await self.error(None, INVALID_REQUEST, "not a JSON-RPC message")
            return
        method, id_ = message.get("method"), message.get("id")
        if "id" in message and not _valid_id(id_) or message.get("jsonrpc") != "2.0":
            await self.error(id_ if _valid_id(id_) else None, INVALID_REQUEST, 'not a JSON-RPC 2.0 message: it needs "jsonrpc": "2.0" and an id that is a string or an integer')
            return
        if not isinstance(method, str):
            if "result" in message or "error" in message:
                self.answered(message)
            elif id_ is not None:
                await self.error(id_, INVALID_REQUEST, "not a JSON-RPC request: it has no method")
            return
        params = message.get("params")
        if "id" not in message:
            self.notified(method, params)
            return
        try:
            self.check(method, params)
        except Refusal as refusal:
            if method == "tools/call":  # a call all the same: it has its audit line
                asked = params if isinstance(params, dict) else {}
                await self.host.runner.refused(asked.get("name"), asked.get("arguments"), refusal.code, refusal.message, session=self.session)
            await self.error(id_, refusal.code, refusal.message, refusal.data)
            return
        params = params or {}
        try:
            if method == "tools/call":
                if self.modern and tasks.declares(params["_meta"][CAPABILITIES_KEY]) and await self.start_task(id_, params):
                    await self.make_room()
                    return
                done = self.call_now(params)
                if isinstance(done, dict):
                    await self.reply(id_, done)
                    return
                # A plain asyncio task: anyio's task group spawn cost more than a small call. It
                # is registered before it starts, so that a cancellation on the next line finds it.
                task = asyncio.get_running_loop().create_task(self.call(id_, params, done))
                self.start(id_, task)
                await self.make_room()
                return
            result = self.answer_now(method, params)
        except Refusal as refusal:
            await self.error(id_, refusal.code, refusal.message, refusal.data)
            return
        await self.reply(id_, result)

    def check(self, method: str, params: Any) -> None:
        """Raise the :class:`Refusal` a request gets before it is served (its params, its era, the handshake)."""
        if params is not None and not isinstance(params, dict):
            raise Refusal(INVALID_PARAMS, f"the params of {method} must be an object")
        if self.modern:
            self.check_envelope(method, params or {})
        elif method != "initialize" and _enveloped(params):
            raise Refusal(INVALID_REQUEST, "this connection opened with initialize: requests carrying the 2026-07-28 envelope are not accepted on it")
        elif self.version is None and method not in ("initialize", "ping"):
            raise Refusal(INVALID_REQUEST, f"{method} before initialize: the connection starts with initialize")
        if wrong := shapes.initialize(params) if method == "initialize" else shapes.check(method, params or {}):
            raise Refusal(INVALID_PARAMS, wrong)

    def check_envelope(self, method: str, params: dict[str, Any]) -> None:
        """A 2026-07-28 request carries the protocol version and the client's capabilities."""
        if method == "initialize":
            raise Refusal(
                UNSUPPORTED_PROTOCOL_VERSION,
                "this connection speaks the 2026-07-28 protocol, which has no initialize handshake",
                {"supported": list(MODERN_VERSIONS), "requested": params.get("protocolVersion")},
            )
        meta = params.get("_meta")
        missing = [key for key in (VERSION_KEY, CAPABILITIES_KEY) if not isinstance(meta, dict) or key not in meta]
        if missing:
            raise Refusal(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}")
        version = meta[VERSION_KEY]
        if not isinstance(version, str):
            raise Refusal(INVALID_PARAMS, f"params._meta[{VERSION_KEY!r}] must be a string")
        if version not in MODERN_VERSIONS:
            raise Refusal(UNSUPPORTED_PROTOCOL_VERSION, f"unsupported protocol version {version}", {"supported": list(MODERN_VERSIONS), "requested": version})
        if wrong := shapes.envelope(meta, CAPABILITIES_KEY, CLIENT_INFO_KEY):
            raise Refusal(INVALID_PARAMS, wrong)
        self.offers_roots = meta[CAPABILITIES_KEY].get("roots") is not None

    def answer_now(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.modern:
            if method == "server/discover":
                capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
                if tasks.declares(params["_meta"][CAPABILITIES_KEY]):  # the others see the server as before
                    capabilities["extensions"] = {tasks.EXTENSION: {}}
                answer = {"supportedVersions": list(MODERN_VERSIONS), "capabilities": capabilities, "instructions": self.host.instructions()}
                return {**answer, "cacheScope": "private", "ttlMs": 0}
            if method == "tools/list":
                return {"tools": self.tools, "cacheScope": "private", "ttlMs": 0}
            if method in ("tasks/get", "tasks/update", "tasks/cancel"):
                return self.answer_task(method, params)
        elif method == "initialize":
            asked = params["protocolVersion"]
            self.offers_roots = params["capabilities"].get("roots") is not None
            self.elicits = elicits_forms(params["capabilities"])
            self.version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
            return {
                "protocolVersion": self.version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": self.server_info,
                "instructions": self.host.instructions(),
            }
        elif method == "tools/list":
            return {"tools": self.tools}
        elif method == "ping":
            return {}
        raise Refusal(METHOD_NOT_FOUND, "Method not found", method)

    # -- the tasks extension (2026-07-28) ------------------------------------------------------

    @functools.cached_property
    def task_store(self) -> tasks.TaskStore:
        return tasks.TaskStore(root.path for root in self.host.roots.operator)

    async def start_task(self, id_: Any, params: dict[str, Any]) -> bool:
        """Answer a long tool's call with a new task and run the call on as that task; False
        when the call is to be served as a plain call (not a long tool, its roots still to ask,
        no task can be kept)."""
        tool = self.host.runner.host.tools.get(params["name"])
        if tool is None or not tool.long:
            return False
        responses = params.get("inputResponses")
        if isinstance(responses, dict) and ROOTS_INPUT in responses:
            self.roots.apply(responses[ROOTS_INPUT])
        elif self.offers_roots and not self.roots.known:
            return False  # the roots round first, synchronously (the plain call asks for them)
        record = self.task_store.create(tool.name)
        if record is None:
            return False
        run = TaskRun(record)
        self.tasks[record["taskId"]] = run
        run.task = asyncio.get_running_loop().create_task(self.run_task(run, params))
        self.start(("task", record["taskId"]), run.task)
        await self.reply(id_, tasks.shown(record), "task")
        return True

    async def run_task(self, run: TaskRun, params: dict[str, Any]) -> None:
        """The call a task stands for, to its end; each status it passes through is written to the store."""
        store, record = self.task_store, run.record
        name, arguments = params["name"], params.get("arguments")
        asking = None
        if elicits_forms(params["_meta"][CAPABILITIES_KEY]):
            asking = self.resumed(name, arguments, params.get("requestState"), params.get("inputResponses"))
        watch = asyncio.get_running_loop().create_task(self.watch_cancel(run))
        try:
            while True:
                with self.host.roots.viewing(self.roots.view):
                    # No progress: the extension sends none for a task; the client polls.
                    result = await self.host.runner.call(name, arguments, session=self.session, asking=asking)
                if asking is None or not asking.waiting:
                    break
                # The user is asked through the task: tasks/get shows the questions, tasks/update answers them.
                requests = asking.input_requests()
                run.waiting, run.responses = set(requests), {}
                run.answered.clear()
                store.update(record, "input_required", f"{name} waits for the user's answer", inputRequests=requests)
                await run.answered.wait()
                asking.answer(run.responses)
                run.waiting = set()
                store.update(record, "working", f"{name} is running")
        except asyncio.CancelledError:
            why = "cancelled by the client (tasks/cancel)" if run.cancelled_by_client else "the server stopped before the task ended"
            store.update(record, "cancelled", why)
            raise
        except Exception:
            log.exception("tools/call %s (task %s) failed", name, record["taskId"])
            store.update(record, "failed", f"{name} failed: {INTERNAL_MESSAGE}", error={"code": INTERNAL_ERROR, "message": INTERNAL_MESSAGE})
            return
        finally:
            watch.cancel()
            store.forget_cancel(record["taskId"])
            self.tasks.pop(record["taskId"], None)  # its state is the store's from now on
        # Exactly what the plain call answers: the result as a 2026-07-28 reply carries it.
        store.update(record, "completed", None, result=self.finished(result, "complete"))

    async def watch_cancel(self, run: TaskRun) -> None:
        """Cancel ``run`` when another server process was asked to (``tasks/cancel`` landed there)."""
        while not self.task_store.cancel_asked(run.record["taskId"]):
            await asyncio.sleep(tasks.CANCEL_CHECK)
        log.info("task %s: cancelled through another server process", run.record["taskId"])
        run.cancelled_by_client = True
        if run.task is not None:
            run.task.cancel()

    def answer_task(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``tasks/get``, ``tasks/update`` or ``tasks/cancel``."""
        if not tasks.declares(params["_meta"][CAPABILITIES_KEY]):
            raise Refusal(*tasks.missing_capability())
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise Refusal(INVALID_PARAMS, f"{method} needs params {{taskId: string}}: the taskId of the task the tools/call answered with")
        found = self.task_store.get(task_id)
        if found is None:
            raise Refusal(INVALID_PARAMS, "Failed to retrieve task: Task not found, or expired (a task is kept an hour from its creation, ten minutes after its end at least); call the tool again")
        if method == "tasks/get":
            return found
        run = self.tasks.get(task_id)
        if method == "tasks/update":
            responses = params.get("inputResponses")
            if not isinstance(responses, dict):
                raise Refusal(INVALID_PARAMS, "tasks/update needs params {taskId: string, inputResponses: object}: the answers to the task's inputRequests, by key")
            if run is not None and run.waiting:
                # Answers to keys not outstanding are ignored; the task waits until every outstanding key has one.
                run.responses.update({key: value for key, value in responses.items() if key in run.waiting})
                if run.waiting <= set(run.responses):
                    run.answered.set()
            return {}
        if run is not None and run.task is not None and not run.task.done():
            run.cancelled_by_client = True
            run.task.cancel()  # the program is stopped, its change journaled, as for notifications/cancelled
        elif found["status"] not in tasks.TERMINAL:
            self.task_store.ask_cancel(task_id)  # another server process runs it: it looks for this
        return {}

    def notified(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            task = self.running.get(params.get("requestId"))
            if task is not None:
                task.cancel()  # the client expects no answer, and gets none
        elif method == "notifications/roots/list_changed":
            self.roots.changed()  # asked again before the next tool call

    def answered(self, message: dict[str, Any]) -> None:
        future = self.asked.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            log.warning("an answer to no request of ours: %.200s", message)
        elif "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            future.set_exception(ClientError(f"{error.get('code')}: {error.get('message')}"))
        else:
            future.set_result(message["result"])

    async def call(self, id_: Any, params: dict[str, Any], not_now: NotNow | None = None) -> None:
        try:
            try:
                result, kind = await self.run(params, not_now)
            except Refusal as refusal:
                await self.host.runner.refused(params["name"], params.get("arguments"), refusal.code, refusal.message, session=self.session)
                await self.error(id_, refusal.code, refusal.message, refusal.data)
                return
            except Exception:
                log.exception("tools/call %s failed", params["name"])
                await self.error(id_, INTERNAL_ERROR, INTERNAL_MESSAGE)
            else:
                await self.reply(id_, result, kind)
        except ConnectionError:
            self.left()

    async def run(self, params: dict[str, Any], not_now: NotNow | None) -> tuple[dict[str, Any], str]:
        """A tools/call's result, and its kind: ``complete``, or ``input_required`` (2026-07-28)."""
        name, arguments = params["name"], params.get("arguments")
        token = (params.get("_meta") or {}).get("progressToken")

        async def send_progress(done: float, total: float | None, message: str | None) -> None:
            if token is not None:
                note = {"progressToken": token, "progress": done, "total": total, "message": message}
                await self.notify("notifications/progress", {k: v for k, v in note.items() if v is not None})

        asking = None
        if self.modern:
            responses = params.get("inputResponses")
            resumed = self.unsealed(name, arguments, params.get("requestState"))
            if resumed is not None and resumed.roots is not None:
                self.applied_roots(resumed.roots)
            if isinstance(responses, dict) and ROOTS_INPUT in responses:
                self.applied_roots(responses[ROOTS_INPUT])
            elif self.offers_roots and not self.roots.known and name in self.tool_names:
                # This era has no server-to-client requests: the client asks and calls again.
                # (A tool not offered is answered as such at once: no path of it is resolved.)
                return {"inputRequests": {ROOTS_INPUT: {"method": "roots/list"}}}, "input_required"
            if elicits_forms(params["_meta"][CAPABILITIES_KEY]):
                asking = self.resumed(name, arguments, params.get("requestState"), responses, resumed)
        else:
            if self.offers_roots and not self.roots.known:
                await self.roots.ask(lambda: self.request("roots/list"))
            if self.elicits:
                asking = Consent(self.host.settings.ask_timeout, ask=self.elicit)
        with self.host.roots.viewing(self.roots.view):
            self.workspace_from(params)
            result = await self.host.runner.call(name, arguments, send_progress=send_progress, session=self.session, asking=asking, not_now=not_now)
        if asking is not None and asking.waiting:
            return self.park(name, arguments, asking), "input_required"
        return result, "complete"

    @functools.cached_property
    def tool_names(self) -> frozenset[str]:
        return frozenset(tool["name"] for tool in self.tools)

    @functools.cached_property
    def session(self) -> Session:
        """This connection's session, made at its first call: what it needs is loaded then."""
        from ..paths.guard import Session

        return Session()

    def call_now(self, params: dict[str, Any]) -> dict[str, Any] | NotNow | None:
        """A quick tool's answer, made here without a task of its own (see :meth:`CallRunner.call_now`);
        None for a call that may need the client (its roots, its user, progress); a NotNow for one
        begun that :meth:`call` goes on with."""
        meta = params.get("_meta") or {}
        asks_user = ("inputResponses" in params or elicits_forms(meta[CAPABILITIES_KEY])) if self.modern else self.elicits
        if asks_user or "progressToken" in meta or (self.offers_roots and not self.roots.known):
            return None
        if self.modern and WORKSPACE_KEY in meta:
            return None  # checked in call(), where a refused handle has its audit line
        try:
            with self.host.roots.viewing(self.roots.view):
                return self.host.runner.call_now(params["name"], params.get("arguments"), session=self.session)
        except Exception:
            log.exception("tools/call %s failed", params["name"])
            raise Refusal(INTERNAL_ERROR, INTERNAL_MESSAGE) from None

    def applied_roots(self, answer: Any) -> None:
        self.roots.apply(answer)
        self.roots_answer = answer if self.roots.known else None

    def workspace_from(self, params: dict[str, Any]) -> None:
        """Move the workspace to the handle a 2026-07-28 request carries in ``_meta``, if any
        (inside the call's view): checked as ``set_workspace`` checks it, every time."""
        handle = (params.get("_meta") or {}).get(WORKSPACE_KEY) if self.modern else None
        if handle is None:
            return
        from ..api.errors import ToolError

        if not isinstance(handle, str):
            raise Refusal(INVALID_PARAMS, f"params._meta[{WORKSPACE_KEY!r}] must be a string: the workspace a result's _meta named")
        try:
            self.host.roots.set_workspace(handle)
        except ToolError as exc:
            raise Refusal(
                INVALID_PARAMS,
                f"the workspace in params._meta[{WORKSPACE_KEY!r}] is refused ({exc.code.value}: {exc.message}); "
                "call set_workspace again, or send the request without it",
            ) from None

    def unsealed(self, name: str, arguments: Any, state: Any) -> Resumed | None:
        """What a sealed ``requestState`` (HTTP) brings back; None without one, or on stdio (parked)."""
        if self.states is None or state is None:
            return None
        try:
            return self.states.open(state, name, arguments)
        except StateRefused as refused:
            raise Refusal(INVALID_PARAMS, refused.message, {"requestState": refused.why}) from None

    def resumed(self, name: str, arguments: Any, state: Any, responses: Any, unsealed: Resumed | None = None) -> Consent:
        """A 2026-07-28 call's answers so far: those of its earlier rounds, and the user's latest."""
        if self.states is not None:
            asking = unsealed.consent if unsealed is not None else Consent(self.host.settings.ask_timeout)
        else:
            parked = self.parked.pop(state, None) if isinstance(state, str) else None
            if parked is None or parked[0] != call_digest(name, arguments):
                return Consent(self.host.settings.ask_timeout)
            asking = parked[1]
        if unsealed is not None or self.states is None:
            asking.answer(responses if isinstance(responses, dict) else {})
        return asking

    def park(self, name: str, arguments: Any, asking: Consent) -> dict[str, Any]:
        """The ``input_required`` result that puts ``asking``'s questions; kept until the call comes back once
        (sealed in the ``requestState`` itself over HTTP: the retry may reach another process)."""
        if self.states is not None:
            sealed = self.states.seal(name, arguments, asking, self.roots_answer, self.host.settings.ask_timeout)
            return {"inputRequests": asking.input_requests(), "requestState": sealed}
        state = os.urandom(16).hex()
        self.parked[state] = (call_digest(name, arguments), asking)
        while len(self.parked) > MAX_PARKED:
            del self.parked[next(iter(self.parked))]
        return {"inputRequests": asking.input_requests(), "requestState": state}

    async def elicit(self, message: str, schema: dict[str, Any]) -> Any:
        # ``mode`` came with 2025-11-25; an earlier client's strict reader may refuse it.
        return await self.request("elicitation/create", form(message, schema, with_mode=(self.version or "") >= "2025-11-25"))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request to the client on the back-channel and wait for its answer."""
        if self.closed:
            raise ClientError("the client closed the connection")
        self.last_id += 1
        id_ = self.last_id
        self.asked[id_] = asyncio.get_running_loop().create_future()
        self.room.set()  # its answer comes on the input: the reading goes on
        try:
            await self.wire.send({"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})})
            return await self.asked[id_]
        except asyncio.CancelledError:
            if not self.closed:
                import anyio

                with anyio.CancelScope(shield=True):  # so that the client stops asking its user
                    try:
                        await self.notify("notifications/cancelled", {"requestId": id_, "reason": "the server stopped waiting"})
                    except ConnectionError:
                        pass
            raise
        finally:
            del self.asked[id_]

    async def receive_batch(self, batch: list[Any]) -> None:
        """A JSON-RPC batch, on a connection whose version has them: one array answers it."""
        if self.version not in BATCH_VERSIONS:
            await self.error(None, INVALID_REQUEST, "batches are not supported on this connection: send one message per line")
            return
        if not batch:
            await self.error(None, INVALID_REQUEST, "an empty batch: a batch holds at least one message")
            return
        if any(isinstance(message, dict) and message.get("method") == "initialize" for message in batch):
            await self.error(None, INVALID_REQUEST, "initialize cannot be part of a batch: send it alone")
            return
        answers: list[dict[str, Any]] = []
        before = set(self.running.values())
        token = _batch.set(answers)  # the calls' tasks copy the context, and answer into the batch too
        try:
            for message in batch:
                await self.receive(message)
        finally:
            _batch.reset(token)
        calls = [task for task in self.running.values() if task not in before]
        if calls:
            # Sent once the batch's calls are done, while the connection reads on (a cancellation
            # of one of them must still reach it).
            # Kept among the running tasks, under a key no request id can equal.
            task = asyncio.get_running_loop().create_task(self.answer_batch(calls, answers))
            self.start(object(), task)
        elif answers:
            await self.wire.send(answers)

    async def answer_batch(self, calls: list[asyncio.Task[None]], answers: list[dict[str, Any]]) -> None:
        await asyncio.wait(calls)
        if answers:
            try:
                await self.wire.send(answers)
            except ConnectionError:
                self.left()

    async def reply(self, id_: Any, result: dict[str, Any], kind: str = "complete") -> None:
        await self.answer({"jsonrpc": "2.0", "id": id_, "result": self.finished(result, kind)})

    def finished(self, result: dict[str, Any], kind: str) -> dict[str, Any]:
        """``result`` as it goes on the wire: a 2026-07-28 one says whether it is final, and who
        answered, and carries the workspace's handle the client sends back to keep it."""
        if self.modern:
            meta = {**result.get("_meta", {}), SERVER_INFO_KEY: self.server_info}
            if self.roots.view.chosen:
                meta[WORKSPACE_KEY] = str(self.roots.view.workspace)
            result = {**result, "resultType": kind, "_meta": meta}
        return result

    async def error(self, id_: Any, code: int, message: str, data: Any = None) -> None:
        error = {"code": code, "message": message, **({"data": data} if data is not None else {})}
        await self.answer({"jsonrpc": "2.0", "id": id_, "error": error})

    async def answer(self, message: dict[str, Any]) -> None:
        batch = _batch.get()
        if batch is None:
            await self.wire.send(message)
        else:
            batch.append(message)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.wire.send({"jsonrpc": "2.0", "method": method, "params": params})


async def messages(wire: Wire) -> AsyncIterator[Any]:
    """Each JSON value the client sends; lines that are none are answered with an error here."""
    while (line := await wire.read_line()) is not None:
        if not line.strip():
            continue
        if line is TOO_LONG and wire.limit is not None:
            await wire.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": too_long(wire.limit)}})
            continue
        if too_deep(line):  # before any parser, whose recursion it would exhaust
            await wire.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": TOO_DEEP}})
            continue
        try:
            message = _loads(line)
        except ValueError:
            await wire.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error: not a JSON line"}})
            continue
        yield message


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
"""Every digit as ``0``: a line's runs of digits, found by ``in``."""
_LONG_NUMBER = b"0" * 19
"""Digits enough for an integer past 64 bits, which orjson would read as a float. Looked for in
the line translated by ``_DIGITS``, not by a regex: ``[0-9]{19}`` tries every digit of a run
again from the next one (half a second for a 10 MB argument of numbered lines; this, a hundredth)."""


def _loads(line: bytes) -> Any:
    # orjson reads a request in a sixth of the standard library's time; what it refuses (a
    # lone surrogate, NaN) or would read otherwise (a long integer) the standard library reads.
    if _LONG_NUMBER not in line.translate(_DIGITS):
        try:
            return orjson.loads(line)
        except ValueError:
            pass
    return json.loads(line)


def _valid_id(id_: Any) -> bool:
    return isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool))


def _enveloped(params: Any) -> bool:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and VERSION_KEY in meta


async def serve_stdio(host: Host | DeferredHost) -> None:
    """Serve one client over stdin and stdout until it closes its end, or SIGTERM or SIGINT comes;
    then end the process promptly."""
    loop = asyncio.get_running_loop()
    wire = await PipeWire.claim(max_message_bytes(host.settings.max_file_bytes))
    serving = asyncio.current_task()

    def stop(name: str) -> None:
        # The first signal stops the reading (the task is cancelled where it waits for a line),
        # the second the waiting for the calls in flight.
        wire.stopped = name
        serving.cancel()  # type: ignore[union-attr]

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop, signal.Signals(signum).name)
    try:
        abandoned = await serve_wire(host, wire)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
    deadline = loop.time() + EXIT_GRACE
    if abandoned:
        await asyncio.wait(abandoned, timeout=EXIT_GRACE)
    # A call's thread stops at its next check for cancellation; one blocked in a read that does
    # not return (a FIFO, a hung mount) must not hold the process once nobody waits for it.
    if any(not task.done() for task in abandoned) or not WORKERS.wait_idle(max(0.0, deadline - loop.time())):
        why = f"{wire.stopped}: calls were still running" if wire.stopped else "the client left while calls were still running"
        log.warning("%s; exiting without waiting for them", why)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


async def serve_wire(host: Host | DeferredHost, wire: Wire) -> list[asyncio.Task[None]]:
    """Serve one client over ``wire``, in the era its first request opens; the calls left running, cancelled."""
    return await Connection(host, wire).serve(messages(wire))
