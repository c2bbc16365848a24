"""What an ``INVALID_PARAMS`` answer says: each problem where it is, and the fields that place takes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

    from .tools import Tool


def describe_invalid(tool: Tool, exc: ValidationError) -> str:
    schema = tool.input_schema()
    problems, places = [], []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"{where}: unknown parameter")
            places.append(tuple(err["loc"][:-1]))
        elif err["type"] == "missing":
            problems.append(f"{where}: required")
        else:
            # A validator's own sentence, without the prefix pydantic puts before it.
            problems.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    # An unknown field inside an item is answered with that item's fields, not the tool's.
    takes = []
    for place in dict.fromkeys(places):
        fields = _fields_at(schema, place) if place else None
        if fields:
            named = ".".join(str(p) for p in place if not isinstance(p, int))
            takes.append(f"{'An item of ' if isinstance(place[-1], int) else ''}{named} takes: {', '.join(fields)}")
    params = ", ".join(schema.get("properties", {})) or "none"
    return f"invalid arguments for {tool.name}: {'; '.join(problems)}. " + "".join(t + ". " for t in takes) + f"Parameters: {params}"


def _fields_at(schema: dict[str, Any], loc: tuple[Any, ...]) -> list[str] | None:
    """The property names of the object at ``loc`` in ``schema`` (None when the walk gets lost)."""
    defs = schema.get("$defs", {})
    node: dict[str, Any] | None = schema
    for part in loc:
        if node is None:
            return None
        branches = _branches(node, defs)
        if isinstance(part, int):
            node = next((b["items"] for b in branches if isinstance(b.get("items"), dict)), None)
            continue
        found = next((b["properties"][part] for b in branches if part in b.get("properties", {})), None)
        if found is not None:
            node = found
        # Else a union member's tag (pydantic names the model it tried): the same place.
    if node is None:
        return None
    fields = [name for b in _branches(node, defs) for name in b.get("properties", {})]
    return list(dict.fromkeys(fields)) or None


def _branches(node: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """``node`` with references followed and unions spread into their members."""
    while "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return [b for sub in node[key] for b in _branches(sub, defs)]
    return [node]
