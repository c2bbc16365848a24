"""The hook specifications: the host's whole extension surface.

Five concerns, one banner each: tool registration, path policy, calls, changes, result formatting. A plugin
implements any subset with ``@fsmcp.hookimpl``; an implementation may accept any subset of a
spec's arguments, and specs only ever gain arguments, so a plugin written today keeps working.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .hooks import hookspec

if TYPE_CHECKING:
    from ..paths.change import Change
    from .config import Settings
    from ..paths.consent import Refusal
    from .errors import ToolError
    from ..paths.fs import FileSystem
    from .tools import ToolResult
    from ..paths.roots import Access, ResolvedPath, RootSet
    from ..run.runner import Around, ToolCall
    from .tools import Tool


# -- Tool registration -----------------------------------------------------------------------


@hookspec
def fsmcp_register_tools(register: Callable[[Tool], None], settings: Settings) -> None:
    """Contribute tools to the server.

    Call ``register(Tool(...))`` once per tool. The host stamps each tool with the plugin that
    registered it, builds its ``inputSchema`` from the input model, and refuses to start when
    two plugins register the same name (the error names both). Whether a registered tool is
    offered is the operator's choice (``--enable`` / ``--disable``), not the plugin's. Under
    ``settings.read_only`` the host offers only tools whose annotations are ``READ_ONLY``: a tool
    still useful then (a batch of reads) registers itself so, saying in its description what
    it refuses; any other is left out.

    Check this plugin's options here: raising :func:`fsmcp.options_error` stops the start with
    exit status 2 and the message, so that a wrong option never starts a server without tools.

    Keep this cheap: it runs at every start-up. Import heavy dependencies inside the tool
    function, not at module level.

    :param register: Takes one :class:`fsmcp.Tool`.
    :param settings: The server's settings; ``settings.options(<plugin name>)`` holds this
        plugin's own section of the configuration.

    All implementations are called; return values are ignored.
    """


# -- Path policy -----------------------------------------------------------------------------


@hookspec(firstresult=True)
def fsmcp_resolve_path(
    raw: str, access: Access, follow_links: bool, policy: str, roots: RootSet, settings: Settings
) -> ResolvedPath | None:
    """Turn a raw path argument into a path the tool may use, or refuse it.

    Every file operation of every tool passes through here (through ``ctx.fs``). The policy
    named by the ``policy`` setting answers; others return None. Before asking, the host has
    already refused every path when no root is usable for this client (its MCP roots and the
    operator's do not overlap) or when ``--require-workspace`` is set and no workspace chosen. The default, ``roots``,
    admits a path whose real path lies inside an allowed root. A policy that only rewrites the
    raw path (for example workspace-relative) still confines through ``roots.confine``.

    :param raw: The path exactly as the client sent it.
    :param access: ``Access.READ`` or ``Access.WRITE``; a write to a read-only root must raise
        ``ToolError(READ_ONLY, ...)``.
    :param follow_links: False when the tool acts on a symlink itself (move, delete, copy);
        the final component is then not resolved.
    :param policy: The configured policy's name (``--policy``).
    :param roots: The allowed roots; ``roots.confine(raw, access, follow_links)`` is the
        default policy's whole check.
    :param settings: The server's settings.
    :return: A :class:`fsmcp.ResolvedPath`, or None when this implementation is not the
        configured policy. Refuse by raising :class:`fsmcp.ToolError` (``ACCESS_DENIED``).

    Stops at the first non-None result.
    """


@hookspec
def fsmcp_check_path(path: ResolvedPath, access: Access, named: str, settings: Settings) -> str | Refusal | None:
    """Veto a path the policy admitted (for example: never touch ``**/.env``).

    Called for every resolution after the policy answered, on every plugin that implements it,
    including each link met on the way, whose target is resolved again like a named path.

    :param path: The resolved path; ``path.path`` is its absolute real path.
    :param access: What the tool wants to do with it.
    :param named: The path as the client named it, absolute, ``..`` folded, links not resolved
        (``.env`` for a link named ``.env``, whose real path may be anything): a veto by name
        checks both.
    :param settings: The server's settings.
    :return: None to allow, or a reason (a sentence the model can act on) to refuse; the tool
        then fails with ``ACCESS_DENIED`` and that reason. A :class:`fsmcp.Refusal` with ``ask``
        (``Refusal(reason, ask="The agent wants to read .env")``) lets the host put ``ask`` to
        the user, where the client can answer (MCP elicitation), the operator allows asking,
        ``access`` is ``Access.READ``, the tool is read-only and every reason refusing the path
        asks; an accepted answer lets exactly that real path through for that one call
        (recorded in the audit log), any other answer leaves the refusal standing.

    All implementations are called; any reason refuses.
    """


@hookspec
def fsmcp_protected_globs(root: str, settings: Settings) -> list[str]:
    """Globs of files under this root that no tool may read or change, and no program the server starts may read.

    The host combines every implementation's list for a root (in plugin order) into one
    :class:`fsmcp.paths.protected.ProtectedNames` and hands it out through ``ctx.protected(root)``,
    cached per root: tools that find files themselves rather than by a path the client named
    (``grep_files`` through ripgrep, ``compress_files``, ``extract_archive``) leave matching files
    out, and the host keeps started programs from reading them. Refusing a path a client names
    is :func:`fsmcp_check_path`'s job: an implementation of this hook usually vetoes there too,
    with its own reason (the host's ``secrets`` plugin does both).

    Globs are gitignore-style and match the path relative to ``root``: a glob without ``/``
    matches a name at any depth, one with ``/`` is anchored to the root (``**/`` for any depth),
    ``!glob`` re-includes, the last match decides, a matched directory protects all below it.
    Names are compared after Unicode NFKC normalisation and case folding.

    :param root: A root's real path.
    :param settings: The server's settings.
    :return: The globs (an empty list protects nothing).

    All implementations are called; the lists are concatenated.
    """


# -- Calls -----------------------------------------------------------------------------------


@hookspec
def fsmcp_around_call(call: ToolCall, settings: Settings) -> Around | None:
    """Wrap one tool call a client made: see it before it runs, its outcome after, run it again.

    Asked once per call a client makes (not for a tool another one runs, such as a batch's
    step), before anything of it runs. An implementation that has nothing to do for this call
    returns None, and costs the call nothing more; one that wraps it returns an async function
    ``around(run)`` that awaits ``run()`` (the rest of the call: the wrappers inside this one,
    then the tool) and returns the outcome, a :class:`fsmcp.ToolResult` or the
    :class:`fsmcp.ToolError` it met, which the host then formats (inside the outermost
    ``around``, whose ``run()`` raises when the formatter fails). ``around`` may await ``run()``
    more than once (consent runs the call again with the paths the user allowed), or not at all
    and answer with a :class:`fsmcp.ToolError` itself. The host's audit log (``fsmcp.audit``)
    and consent (``fsmcp.consent``) are such wrappers. The plugin named ``fsmcp.consent`` (the
    host's, or one that replaces it) is asked only for a call whose ``asking`` is not None: a
    call whose user cannot be asked does not enter it.

    The implementation pluggy calls first is the outermost: the audit log (``tryfirst``,
    registered after every other plugin) sees the call once, whatever happens inside; consent (``trylast``) is next to the tool, so that
    each of its rounds runs every wrapper inside it again. A call no implementation wraps may
    be answered on the event loop without a task of its own (stdio's quick calls); one that
    some implementation wraps is always awaited, so return None when there is nothing to do.

    :param call: The call as the client made it: ``name``, ``arguments`` (not yet validated),
        ``tool`` (None for a name this server does not offer), ``session`` (the connection's
        id) and ``asking`` (how the transport can ask the client's user, or None);
        ``call.note(name=value)`` adds a field to the call's audit line, wherever ``around`` runs;
        ``call.refused`` is the JSON-RPC error code of a call the transport refused before any
        tool ran (malformed params): it is wrapped too, ``run()`` answers it with an
        ``INVALID_PARAMS`` error, and the client gets the transport's error whatever ``around``
        returns.
    :param settings: The server's settings.
    :return: None, or ``around``. Exceptions other than a cancellation are the plugin's bug:
        raised by ``around``, they end the call with the transport's internal error; raised
        here, they stop the call before it runs (an ``INTERNAL_ERROR`` result naming the
        plugin, which the wrappers asked before this one see).

    All implementations are called; every ``around`` returned wraps the call.
    """


# -- Changes ---------------------------------------------------------------------------------


@hookspec
def fsmcp_before_change(change: Change, paths: list[ResolvedPath], fs: FileSystem, settings: Settings) -> None:
    """Observe paths a tool call is about to change, before anything of them changes.

    Every primitive that changes files (``ctx.fs.write_atomic``, ``append``, ``mkdir``,
    ``chmod``, ``symlink``, ``remove``, ``rename``, ``copy``: every tool's writes, ours or a third
    party's) announces its paths first; each path reaches this hook once per call, with the
    file or tree still as it was. A call is one change however many paths it touches; a tool
    that runs others (``batch_operations``) makes one change with them. The host's journal
    (``fsmcp.journal``) saves here what the change will replace.

    Runs in the tool's thread, synchronously: what it does adds to the call's time. Read the
    paths through ``fs`` or ``fs.confinement`` (never by name: a path may have been swapped for a
    link since) and change nothing. Keep per-call state in ``change.state[<your plugin name>]``.

    :param change: The call's :class:`fsmcp.Change` (``tool``, ``time``, ``paths`` so far).
    :param paths: The newly announced paths, resolved (a link to be replaced is itself the path).
    :param fs: The file system of the tool call whose primitive announced them (a batch's step,
        or the call itself); ``fs.call`` is that call's :class:`fsmcp.ToolContext`, whose
        ``cancelled`` a hook that waits looks at.
    :param settings: The server's settings.

    All implementations are called. Raising :class:`fsmcp.ToolError` refuses the change: the
    primitive fails with that error before it touches anything.
    """


@hookspec
def fsmcp_after_change(change: Change, failed: bool, fs: FileSystem, settings: Settings) -> str | None:
    """A tool call that announced paths has ended (a git commit per change goes here).

    Called once per call that announced at least one path, in the tool's thread, after the
    tool returned or raised and before the client gets the result; also for a call the client
    cancelled, once its tool stops.

    :param change: The call's :class:`fsmcp.Change`, every path it announced in ``paths``.
    :param failed: True when the tool failed (a failed change is meant to leave everything as
        it was, but a third-party tool may not have).
    :param fs: The host's file system.
    :param settings: The server's settings.
    :return: None, or a sentence for the model that the host adds to a successful call's
        result (the journal's: this change cannot be undone, and why).

    All implementations are called; every sentence returned is added. An exception is
    logged and does not change the call's outcome.
    """


# -- Result formatting -----------------------------------------------------------------------


@hookspec(firstresult=True)
def fsmcp_format_result(
    tool: Tool | None, outcome: ToolResult | ToolError, format: str, settings: Settings
) -> dict[str, Any] | None:
    """Turn a tool's result, or its failure, into the MCP result the client receives.

    The formatter named by the ``format`` setting answers; others return None. The answer is
    the ``CallToolResult`` as it goes on the wire, a dict such as
    ``{"content": [{"type": "text", "text": "..."}]}`` (the ``mcp`` SDK's
    ``types.CallToolResult`` model is accepted too). A failure must become a result with
    ``"isError": True`` whose text leads with the error's code. The formatter owns the output
    budget (``settings.budget``): it never sends more text than that, and says so when it cut.

    :param tool: The tool that ran, or None when the client named no known tool.
    :param outcome: A :class:`fsmcp.ToolResult`, or the :class:`fsmcp.ToolError` it raised.
    :param format: The configured format's name (``--format``).
    :param settings: The server's settings.
    :return: The result as a dict, or None when this is not the configured format.

    Stops at the first non-None result. Whether an implementation answers depends on ``format``
    alone: the host asks the whole hook once at start (``tool=None``, an empty
    :class:`fsmcp.ToolResult`) and from then on the implementation that answered.
    """
