"""What an ``INVALID_PARAMS`` answer says: each problem where it is, in the words of the
parameters (``lineCount: must be 0 or more, not -1``), and the fields that place takes.

pydantic words its errors for Python programmers (``lineCount.none: Input should be None``):
it places an error of a union member under the member's tag and reports every member that
failed. Here the tags are dropped, the members' complaints about one place become one
sentence, and each kind of error is said in terms of what the parameter must be.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

    from .tools import Tool

# What a value of the wrong kind should have been, by pydantic's error type.
_KINDS = {
    "string_type": "a string",
    "string_unicode": "a string",
    "bytes_type": "a string",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
}


def describe_invalid(tool: Tool, exc: ValidationError, sent: Any = None) -> str:
    """``sent``: the arguments as the client sent them, so that a value given under an alias is
    named as the client named it (``pattern (regex): must be a string``)."""
    from .tools import json_schema  # here: a start from the tool-list cache imports this module, not pydantic

    schema = tool.input_schema()
    # The aliases the client used for a parameter it did not name itself.
    called = {}
    if isinstance(sent, dict):
        called = {canonical: alias for alias, canonical in tool.input_model.aliases.items() if alias in sent and canonical not in sent}
    raw = json_schema(tool.input_model)
    problems: dict[str, list[dict[str, Any]]] = {}
    places = []
    for err in exc.errors(include_url=False):
        if err["type"] == "extra_forbidden":  # the name sent, which no schema holds
            loc = (*_place(raw, tuple(err["loc"][:-1]))[0], err["loc"][-1])
            places.append(loc[:-1])
        else:
            loc = _place(raw, tuple(err["loc"]))[0]
        if loc and loc[0] in called:
            loc = (f"{called[loc[0]]} ({loc[0]})", *loc[1:])
        problems.setdefault(".".join(str(p) for p in loc) or "arguments", []).append(err)
    said = [f"{where}: {_say(errs)}" for where, errs in problems.items()]
    # An unknown field inside an item is answered with that item's fields, not the tool's.
    takes = []
    for place in dict.fromkeys(places):
        fields = _fields_at(schema, place) if place else None
        if fields:
            named = ".".join(str(p) for p in place if not isinstance(p, int))
            takes.append(f"{'An item of ' if isinstance(place[-1], int) else ''}{named} takes: {', '.join(fields)}")
    params = ", ".join(schema.get("properties", {})) or "none"
    return f"invalid arguments for {tool.name}: {'; '.join(said)}. " + "".join(t + ". " for t in takes) + f"Parameters: {params}"


def _say(errs: list[dict[str, Any]]) -> str:
    """One sentence for the errors pydantic reported at one place (one per union member)."""
    types = {e["type"] for e in errs}
    if "extra_forbidden" in types:
        return "unknown parameter"
    if "missing" in types:
        return "required"
    own = [e["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ") for e in errs if e["type"] in ("value_error", "assertion_error")]
    if own:
        return "; ".join(dict.fromkeys(own))
    # A member whose type the value had names the bound it broke; the others' type errors
    # (None for an optional parameter) say nothing then.
    if types & {"string_too_short", "too_short"} and all((e.get("ctx") or {}).get("min_length") == 1 for e in errs if e["type"] in ("string_too_short", "too_short")):
        return "must not be empty"
    bounds = [b for b in (_bound(e) for e in errs) if b]
    if bounds:
        return f"must be {' and '.join(dict.fromkeys(bounds))}, not {_shown(errs[0]['input'])}"
    kinds = [_KINDS[e["type"]] for e in errs if e["type"] in _KINDS]
    if kinds:
        return f"must be {' or '.join(dict.fromkeys(kinds))}, not {_shown(errs[0]['input'])}"
    return f"{_shown(errs[0]['input'])} is not a value it takes"


_BOUNDS = {
    "greater_than_equal": "{ge} or more",
    "greater_than": "more than {gt}",
    "less_than_equal": "at most {le}",
    "less_than": "less than {lt}",
    "multiple_of": "a multiple of {multiple_of}",
    "string_too_short": "at least {min_length} characters long",
    "string_too_long": "at most {max_length} characters long",
    "string_pattern_mismatch": "text matching {pattern}",
    "too_short": "a list of at least {min_length} items",
    "too_long": "a list of at most {max_length} items",
}
"""What a value of the right kind must also be, by pydantic's error type, from the error's ``ctx``."""


def _bound(err: dict[str, Any]) -> str | None:
    """What a value of the right kind must also be, or None for an error that is no bound."""
    kind = err["type"]
    ctx = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in (err.get("ctx") or {}).items()}
    if kind in ("literal_error", "enum"):
        return f"one of {ctx['expected'].replace(' or ', ', ')}"
    template = _BOUNDS.get(kind)
    return None if template is None else template.format(**ctx)


def _shown(value: Any) -> str:
    """The value as the client sent it, in JSON, when short; else what kind of value it was."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list" if value else "an empty list"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return "that"
    return text if len(text) <= 40 else f"{text[:37]}..."


def _place(schema: dict[str, Any], loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
    """``loc`` without the union members' tags pydantic puts in it (``str``, ``none``,
    ``function-after[...]``, a model's class name): the path of names and indexes a client wrote;
    and the node of ``schema`` there (None when the walk gets lost)."""
    defs = schema.get("$defs", {})
    node: dict[str, Any] | None = schema
    kept = []
    for part in loc:
        branches = _branches(node, defs) if node is not None else []
        if isinstance(part, int):
            kept.append(part)
            node = next((b["items"] for b in branches if isinstance(b.get("items"), dict)), None)
            continue
        found = next((b["properties"][part] for b in branches if part in b.get("properties", {})), None)
        if found is not None or node is None and not _tag_like(part):
            kept.append(part)
            node = found
        # Else a union member's tag (pydantic names the model it tried): the same place.
    return tuple(kept), node


def _tag_like(part: str) -> bool:
    return part in ("str", "int", "float", "bool", "none", "list", "dict") or "[" in part


def _fields_at(schema: dict[str, Any], loc: tuple[Any, ...]) -> list[str] | None:
    """The property names of the object at ``loc`` in ``schema`` (None when the walk gets lost)."""
    node = _place(schema, loc)[1]
    if node is None:
        return None
    fields = [name for b in _branches(node, schema.get("$defs", {})) for name in b.get("properties", {})]
    return list(dict.fromkeys(fields)) or None


def _branches(node: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """``node`` with references followed and unions spread into their members."""
    while "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return [b for sub in node[key] for b in _branches(sub, defs)]
    return [node]
