"""The shapes the protocol gives a request's params, checked before the request is served.

The stdio transport reads JSON without the SDK's models, so it checks here what those models
would refuse with ``-32602``: each function returns what is wrong, or None.
"""

from __future__ import annotations

from typing import Any


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def common(params: dict[str, Any]) -> str | None:
    """What every request's params may carry: ``_meta``, and in it a progress token."""
    meta = params.get("_meta")
    if meta is None:
        return None
    if not isinstance(meta, dict):
        return "params._meta must be an object"
    token = meta.get("progressToken")
    if token is not None and not (isinstance(token, str) or _is_int(token)):
        return "params._meta.progressToken must be a string or an integer"
    return None


def initialize(params: dict[str, Any] | None) -> str | None:
    """``initialize`` needs {protocolVersion: string, capabilities: object, clientInfo: {name, version}}."""
    if params is None:
        return "initialize needs params {protocolVersion, capabilities, clientInfo}"
    if wrong := common(params):
        return wrong
    if not isinstance(params.get("protocolVersion"), str):
        return "initialize: params.protocolVersion must be a string, such as \"2025-11-25\""
    if not isinstance(params.get("capabilities"), dict):
        return "initialize: params.capabilities must be an object"
    info = params.get("clientInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        return "initialize: params.clientInfo must be an object {name: string, version: string}"
    return None


def listing(params: dict[str, Any]) -> str | None:
    """A paginated request: its ``cursor``, when given, is a string."""
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        return "params.cursor must be a string: the nextCursor of an earlier page"
    return None


def call(params: dict[str, Any]) -> str | None:
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
        return "tools/call needs params {name: string, arguments?: object}"
    return None


def envelope(meta: dict[str, Any], capabilities_key: str, info_key: str) -> str | None:
    """A 2026-07-28 envelope's client capabilities (and client info, when given) are objects."""
    if not isinstance(meta[capabilities_key], dict):
        return f"params._meta[{capabilities_key!r}] must be an object"
    if info_key in meta and not isinstance(meta[info_key], dict):
        return f"params._meta[{info_key!r}] must be an object {{name, version}}"
    return None


def check(method: str, params: dict[str, Any]) -> str | None:
    """What is wrong with the params of a request other than ``initialize``."""
    particular = {"tools/list": listing, "tools/call": call}.get(method)
    return common(params) or (particular(params) if particular is not None else None)
