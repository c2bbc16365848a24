"""A tool as a plugin defines it: its definition, the base model of its arguments, what it returns,
and the output budget that holds what it returns."""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Awaitable, Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from ..run.context import ToolContext


@dataclass(frozen=True)
class Annotations:
    """MCP tool annotations; ``openWorldHint`` is always false for a file tool."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False


READ_ONLY = Annotations(read_only=True, destructive=False, idempotent=True)
"""Reads and never changes anything."""
CREATES = Annotations(read_only=False, destructive=False, idempotent=True)
"""Adds without overwriting or removing (``create_directory``)."""
OVERWRITES = Annotations(read_only=False, destructive=True, idempotent=True)
"""Replaces content; calling it twice leaves the same state (``write_file``)."""
DESTRUCTIVE = Annotations(read_only=False, destructive=True, idempotent=False)
"""Changes or removes content; calling it twice differs from once (``delete_file``, ``append_file``)."""


class ToolInput(BaseModel):
    """Base of every tool's argument model.

    Field names are snake_case in Python and camelCase on the wire. Unknown arguments are
    refused, so a misspelt parameter is an ``INVALID_PARAMS`` error rather than silently ignored.
    ``aliases`` maps names that other servers use for the same parameter to ours; they are
    accepted silently and never advertised, and the canonical name wins when both are given.
    A mutating tool declares ``expected_version: ExpectedVersion = None``; the host then checks
    it against the file named by the field ``versioned`` names before the tool runs (a list
    field: it must hold exactly one path). ``items_of`` names the tool whose arguments the items
    of its list fields are (``write_files``: ``write_file``): where that tool is offered too, it
    describes them, and here they are sent as plain objects. ``prepare`` rewrites the arguments
    before they are read (other servers' forms of them).
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, defer_build=True
    )
    aliases: ClassVar[dict[str, str]] = {}
    versioned: ClassVar[str] = "path"
    items_of: ClassVar[str] = ""

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Override to rewrite the arguments before they are validated: other servers' forms of
        them (``lineRange: "a-b"``, an array sent as its JSON text), values an alias needs
        converted. ``data`` is the arguments by their wire names, a copy of the tool's own to
        change; return it (or another dict). Runs before ``aliases`` are applied. A
        ``ValueError`` raised here is an ``INVALID_PARAMS`` error with its message."""
        return data

    @model_validator(mode="before")
    @classmethod
    def _before_validation(cls, data: Any) -> Any:
        # One validator for every model: the argument dict is copied once, and only when a
        # model rewrites it (most models have neither prepare nor aliases).
        prepares = cls.prepare.__func__ is not ToolInput.prepare.__func__  # type: ignore[attr-defined]
        if not (prepares or cls.aliases) or not isinstance(data, dict):
            return data
        data = dict(data)
        if prepares:
            data = cls.prepare(data)
        for alias, canonical in cls.aliases.items():
            if alias in data:
                value = data.pop(alias)
                data.setdefault(canonical, value)
        return data


ToolFunction = Callable[[Any, "ToolContext"], "ToolResult | str | Awaitable[ToolResult | str]"]


@dataclass
class Tool:
    """A tool as a plugin registers it.

    ``function(args, ctx)`` receives the validated ``input_model`` instance and a
    :class:`~fsmcp.run.context.ToolContext`; it returns a :class:`~fsmcp.api.tools.ToolResult` or a
    plain string, or raises :class:`~fsmcp.api.errors.ToolError`. A plain function runs in a worker
    thread; an ``async def`` runs on the event loop. ``function`` may also be a
    ``"module:name"`` string, imported at the tool's first call, so that what a tool needs to
    run costs nothing at start-up or when it is never called. ``plugin`` is stamped by the host.
    """

    name: str
    description: str
    input_model: type[ToolInput]
    function: ToolFunction | str
    annotations: Annotations = READ_ONLY
    title: str | None = None
    output_model: type[BaseModel] | None = None
    starts_programs: bool = False
    """The tool starts external programs (through :func:`fsmcp.start_program`): with
    ``sandbox = "require"`` on a kernel that cannot confine them, it is not offered."""
    quick: bool = False
    """A plain, read-only tool whose usual call is a moment's work (metadata, a small file): the
    host runs it on the event loop, sparing the hand-off to a worker thread and back, while every
    root lies on a local file system (:mod:`fsmcp.paths.roots`). There the host's primitives stop it
    when the work turns out larger (a file over :data:`fsmcp.paths.fs.QUICK_BYTES`, a listing),
    and the host runs it again from the start in a worker thread, so it must change nothing."""
    long: bool = False
    """A call may run for minutes (a program, a walk of a large tree, an archive, a batch of
    steps): a 2026-07-28 client that declares the tasks extension gets a task for it, which it
    polls and may cancel, instead of a request held open (docs/tasks.md)."""
    plugin: str = field(default="", compare=False)

    def input_schema(self, offered: Collection[str] = ()) -> dict[str, Any]:
        """The arguments' schema; ``offered``: the names of the tools offered beside this one."""
        schema = json_schema(self.input_model)
        if self.input_model.items_of and self.input_model.items_of in offered:
            for value in schema.get("properties", {}).values():
                if "$ref" in value.get("items", {}):
                    value["items"] = {"type": "object"}
        _inline_defs(schema)
        _compact(schema)
        # Unknown arguments are refused by the server, naming the accepted ones; the schema does
        # not say so, as it would refuse the aliases a client-side check reads it for.
        schema.pop("additionalProperties", None)
        for value in schema.get("properties", {}).values():
            _checked_by_the_server(value)
        schema.setdefault("properties", {})
        return schema

    def resolve(self) -> ToolFunction:
        """The function, imported first if it was given as ``"module:name"``."""
        if isinstance(self.function, str):
            module, _, name = self.function.partition(":")
            self.function = getattr(importlib.import_module(module), name)
        return self.function

    def wire(self, offered: Collection[str] = ()) -> dict[str, Any]:
        """The tool as ``tools/list`` sends it among the ``offered`` tools."""
        a = self.annotations
        listing: dict[str, Any] = {"name": self.name}
        if self.title:
            listing["title"] = self.title
        listing["description"] = self.description
        listing["inputSchema"] = self.input_schema(offered)
        if self.output_model is not None:
            listing["outputSchema"] = output = json_schema(self.output_model)
            _inline_defs(output)
            _compact(output, optional_is_absent=False)  # a result may well hold a null
        # The title is the tool's own field; a copy among the annotations would be sent twice.
        # destructiveHint and idempotentHint mean something only when readOnlyHint is false (the spec).
        # idempotentHint is sent only when true: false is the spec's default.
        listing["annotations"] = (
            {"readOnlyHint": True, "openWorldHint": a.open_world}
            if a.read_only
            else {"readOnlyHint": False, "destructiveHint": a.destructive, **({"idempotentHint": True} if a.idempotent else {}), "openWorldHint": a.open_world}
        )
        return listing


_json_schemas: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema(by_alias=True)``, a copy of the one computed at the model's first
    use: pydantic builds it anew at every request (ms a model), and every host lists each tool's
    (a process that starts several, as the tests do, or a refused call that names the parameters)."""
    schema = _json_schemas.get(model)
    if schema is None:
        schema = _json_schemas[model] = model.model_json_schema(by_alias=True)
    return _copied(schema)


def _copied(value: Any) -> Any:
    """A JSON value's copy, its dicts and lists new (what the callers change); a third of
    ``copy.deepcopy``'s time, which keeps a memo for cycles such a value never has."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


# -- what a tool returns: typed parts that a formatter turns into MCP content ----------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Blob:
    """Binary content. Formatters send ``image/*`` as an image and anything else as a resource."""

    data: bytes
    mime_type: str
    uri: str | None = None


Part = Text | Blob


@dataclass
class ToolResult:
    """A tool's answer: the parts the model reads and, optionally, the same facts as data.

    ``data`` is what the json formatter puts under ``"data"`` and what becomes
    ``structuredContent`` for tools that declare an output model; the text parts are what the
    text formatter sends.
    """

    parts: list[Part] = field(default_factory=list)
    data: Any = None

    @classmethod
    def text(cls, text: str, data: Any = None) -> ToolResult:
        return cls([Text(text)], data)


# -- the output budget: one cap on the text a result carries, and truncation that says so ----


def truncate(text: str, limit: int, how_to_continue: str) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` characters at a line boundary, with a notice.

    The notice names how much was shown and ``how_to_continue`` (an offset, a ``startLine``,
    a narrower path or glob). Returns the text and whether it was cut.
    """
    if len(text) <= limit:
        return text, False
    notice_room = min(len(how_to_continue) + 120, limit // 2)
    cut = text.rfind("\n", 0, limit - notice_room)
    if cut <= 0:
        cut = limit - notice_room
    shown = text[:cut]
    notice = (
        f"\n[truncated: showed {len(shown):,} of {len(text):,} characters "
        f"(output budget {limit:,}). {how_to_continue}]"
    )
    return shown + notice, True


def fair_shares(needs: list[int], total: int) -> list[int]:
    """Split ``total`` characters max-min fairly: none gets more than it needs, the rest share evenly.

    For results made of several parts (several files, several batch steps) held to one budget.
    """
    shares = [0] * len(needs)
    left, count = max(total, 0), len(needs)
    for i in sorted(range(len(needs)), key=needs.__getitem__):
        shares[i] = min(needs[i], left // count)
        left -= shares[i]
        count -= 1
    return shares


def number_runs(numbers: list[int]) -> str:
    """Ascending numbers compactly: ``1, 2, 3, 5`` as ``1-3, 5`` (hunks, operations, lines)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)

def _compact(schema: Any, optional_is_absent: bool = True) -> None:
    """A schema without what the model pays for in tokens and learns nothing from.

    pydantic titles every property with its own name, and writes an optional field as
    ``anyOf: [T, null]`` with ``default: null``: an optional field is one left out of
    ``required``, so in arguments it becomes plain ``T`` (a client that sends null is still
    accepted); in a result, where null is a value, it stays, as ``type: [T, "null"]`` when ``T``
    is a plain type, and without the default, which says nothing about a result.
    ``additionalProperties: true`` is what an object allows anyway.
    """
    if isinstance(schema, dict):
        schema.pop("title", None)
        if schema.get("additionalProperties") is True:
            del schema["additionalProperties"]
        either = schema.get("anyOf")
        if isinstance(either, list) and {"type": "null"} in either and len(either) == 2:
            other = next(s for s in either if s != {"type": "null"})
            if optional_is_absent:
                del schema["anyOf"]
                schema.update(other)
                schema.pop("default", None)
            elif set(other) == {"type"} and isinstance(other["type"], str):
                del schema["anyOf"]
                schema["type"] = [other["type"], "null"]
                if schema.get("default", 0) is None:
                    del schema["default"]
        for key, value in schema.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                for sub in value.values():
                    _compact(sub, optional_is_absent)
            else:
                _compact(value, optional_is_absent)
    elif isinstance(schema, list):
        for value in schema:
            _compact(value, optional_is_absent)


def _checked_by_the_server(schema: Any) -> None:
    """A parameter's schema without what the server checks itself and the model need not be told:
    that a list or a text is not empty, that an item refuses unknown fields (a refused field's
    error names the accepted ones), and that a flag is off unless given (what an absent flag means)."""
    for node in _objects(schema):
        if node.get("type") == "boolean" and node.get("default") is False:
            del node["default"]
        if node.get("minItems") == 1:
            del node["minItems"]
        if node.get("minLength") == 1:
            del node["minLength"]
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every object in the JSON value ``value``, each before those inside it (which it may change first)."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _inline_defs(schema: dict[str, Any]) -> None:
    """Each definition used once written where it is used: a ``$ref`` and its ``$defs`` entry
    cost the model more than the definition itself. A definition used twice or more is shared."""
    defs = schema.get("$defs")
    if not defs:
        return
    uses: dict[str, int] = {}
    for node in _objects(schema):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            uses[ref[8:]] = uses.get(ref[8:], 0) + 1
    once = {name for name, n in uses.items() if n == 1 and not _refers_to(defs[name], name)}

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref[8:] in once:
                return inline({**defs[ref[8:]], **{k: v for k, v in node.items() if k != "$ref"}})
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(value) for value in node]
        return node

    kept = {name: inline(d) for name, d in defs.items() if name not in once and name in uses}
    body = inline({k: v for k, v in schema.items() if k != "$defs"})
    schema.clear()
    if kept:
        schema["$defs"] = kept
    schema.update(body)


def _refers_to(node: Any, name: str) -> bool:
    return any(inner.get("$ref") == f"#/$defs/{name}" for inner in _objects(node))
