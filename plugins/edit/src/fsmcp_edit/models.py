"""The arguments of edit_file and edit_files.

An edit is one flat object, not a union of shapes: every client's schema handling copes with
it (some reject ``oneOf``), each field is described once, and a mixed-up edit gets a message
naming the fields that do not belong rather than a union's "matches none of" error.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from fsmcp import ExpectedVersion, ToolInput

_TEXT_FIELDS = ("old_text", "new_text", "is_regex", "case_insensitive", "limit", "expected_occurrences", "near_line")
_LINE_FIELDS = ("line_number", "action", "content")
_JS_FLAGS = set("gimsud")
# Names other servers give the fields of one edit (pattern/replacement with type "regex",
# find/replace, search/replace_content, use_regex, ignore_case, line), accepted as ours.
_EDIT_ALIASES = {
    "pattern": "oldText",
    "replacement": "newText",
    "find": "oldText",
    "replace": "newText",
    "search": "oldText",
    "search_content": "oldText",
    "replace_content": "newText",
    "use_regex": "isRegex",
    "ignore_case": "caseInsensitive",
    "line": "lineNumber",
}
_OLD_TEXT_KEYS = ("oldText", "old_text", *(k for k, v in _EDIT_ALIASES.items() if v == "oldText"))
# Top-level names that mean "this call is one edit" (an edit_file {file, find, replace}, without edits).
_SINGLE_EDIT_KEYS = ("oldText", "newText", "find", "replace", "replaceAll", "expectedOccurrences", "isRegex", "caseInsensitive", "limit")


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def _optional(description: str) -> Any:
    """An optional field whose schema is just its type: no ``null``, no ``default: null``."""
    return Field(None, description=description, json_schema_extra=_drop_default)


def _wire(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


class EditItem(ToolInput):
    aliases: ClassVar[dict[str, str]] = _EDIT_ALIASES

    type: Literal["replace", "line"] = Field(
        "replace",
        description='"line": lineNumber, action, content.',
    )
    old_text: str | SkipJsonSchema[None] = _optional(
        "Exact text; if not found, matched ignoring indentation."
    )
    new_text: str = Field(
        "",
        description="With isRegex: $1 \\1 $<name> groups, $& the match, $$ a $.",
    )
    is_regex: bool = Field(
        False,
        description="ECMAScript regex, ^ $ per line.",
    )
    case_insensitive: bool = Field(False, description="Ignore case.")
    limit: int = Field(
        1,
        ge=0,
        description="1: unique, else NOT_UNIQUE; 0: all; N: the first N.",
    )
    expected_occurrences: Annotated[int, Field(ge=1)] | SkipJsonSchema[None] = _optional(
        "Match count required, else EDIT_CONFLICT; replaces all.",
    )
    start_line: int | SkipJsonSchema[None] = _optional(
        "Match in startLine..endLine only (negative: from the end); alone: first match from it."
    )
    end_line: int | SkipJsonSchema[None] = _optional(
        "End of that scope, or of a line edit's range."
    )
    near_line: int | SkipJsonSchema[None] = _optional(
        "Pick the match nearest this line."
    )
    line_number: int | SkipJsonSchema[None] = _optional(
        "1-based, negative from the end (-1: last); insert at 0: append."
    )
    action: Literal["insert", "replace", "delete"] | SkipJsonSchema[None] = _optional(
        "insert content before lineNumber; replace/delete lineNumber..endLine."
    )
    content: str | SkipJsonSchema[None] = _optional("The new lines.")
    dot_all: SkipJsonSchema[bool] = False

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("type") == "regex":
            data["type"] = "replace"
            data.setdefault("isRegex", True)
            data.setdefault("flags", "g")
        flags = data.pop("flags", None)
        if flags is not None:
            _apply_flags(data, flags)
        if data.pop("replaceAll", False):
            data.setdefault("limit", 0)
        if "type" not in data and "action" in data and not any(k in data for k in _OLD_TEXT_KEYS):
            data["type"] = "line"
        return data

    @model_validator(mode="after")
    def _consistent(self) -> EditItem:
        given = self.model_fields_set
        if self.type == "line":
            stray = [_wire(f) for f in (*_TEXT_FIELDS, "start_line") if f in given]
            if stray:
                raise ValueError(f"a line edit (type: line) takes lineNumber, action, content and endLine, not {', '.join(stray)}")
            if self.line_number is None or self.action is None:
                raise ValueError("a line edit needs lineNumber and action (insert, replace or delete)")
            if self.action != "delete" and self.content is None:
                raise ValueError(f"a line {self.action} needs content")
            if self.action == "delete" and self.content is not None:
                raise ValueError("a line delete takes no content")
            if self.action == "insert" and self.end_line is not None:
                raise ValueError("a line insert takes no endLine")
            if self.line_number == 0 and self.action != "insert":
                raise ValueError("lineNumber 0 (the end of the file) only works with action insert")
            if self.end_line == 0:
                raise ValueError("endLine must not be 0")
            _refuse_surrogates(content=self.content)
            return self
        _refuse_surrogates(old_text=self.old_text, new_text=self.new_text)
        stray = [_wire(f) for f in _LINE_FIELDS if f in given]
        if stray:
            raise ValueError(f"{', '.join(stray)}: only for line edits (type: line); a replace edit takes oldText and newText")
        if not self.old_text:
            raise ValueError("oldText is required and must not be empty (to add text at a line, use a line edit with action insert)")
        if self.start_line == 0 or self.end_line == 0 or self.near_line == 0:
            raise ValueError("line numbers start at 1 (negative ones count from the end)")
        return self


def _refuse_surrogates(**texts: str | None) -> None:
    # JSON can carry a lone UTF-16 surrogate; no UTF-8 file can hold one, so it is refused
    # here rather than written as whatever byte an error handler would make of it.
    for name, text in texts.items():
        try:
            (text or "").encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start]
            raise ValueError(f"{_wire(name)} holds a lone UTF-16 surrogate ({bad!r}), which no UTF-8 file can store") from None


def _apply_flags(data: dict[str, Any], flags: Any) -> None:
    if not isinstance(flags, str) or set(flags) - _JS_FLAGS:
        raise ValueError(f"flags {flags!r}: only g, i, m, s, u and d are supported (y and v are not)")
    data.setdefault("limit", 0 if "g" in flags else 1)
    if "i" in flags:
        data.setdefault("caseInsensitive", True)
    if "s" in flags:
        data["dotAll"] = True


def _hoist_single_edit(data: dict[str, Any]) -> dict[str, Any]:
    if "edits" not in data and any(k in data for k in _SINGLE_EDIT_KEYS):
        data["edits"] = [{k: data.pop(k) for k in _SINGLE_EDIT_KEYS if k in data}]
    return data


def _unstring_arrays(data: dict[str, Any], *fields: str) -> dict[str, Any]:
    """Some clients send an array argument as its JSON text (anthropics/claude-code#22394)."""
    for field in fields:
        value = data.get(field)
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, list):
                data[field] = parsed
    return data


_EDITS_DESCRIPTION = "Applied in order."


class EditFileInput(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"file": "path"}

    path: str
    edits: list[EditItem] = Field(min_length=1, description=_EDITS_DESCRIPTION)
    dry_run: bool = False
    expected_version: ExpectedVersion = None

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _unstring_arrays(_hoist_single_edit(data), "edits")


class EditFilesInput(ToolInput):
    items_of: ClassVar[str] = "edit_file"

    paths: list[str] = Field(
        min_length=1,
        description="Files and globs.",
    )
    edits: list[EditItem] = Field(min_length=1, description="As edit_file takes them.")
    dry_run: bool = False
    atomic: bool = Field(
        False,
        description="If any file fails, write none.",
    )
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "paths"

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _unstring_arrays(data, "paths", "edits")
