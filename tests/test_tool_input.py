"""ToolInput.prepare: a model's own rewriting of the arguments, before validation and aliases."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from fsmcp import ToolInput

seen: list[dict[str, Any]] = []


class Span(ToolInput):
    aliases: ClassVar[dict[str, str]] = {"from": "startLine"}
    start_line: int = 1
    end_line: int | None = None

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(data))
        span = data.pop("lineRange", None)
        if span is not None:
            first, sep, last = str(span).partition("-")
            if not sep:
                raise ValueError(f"lineRange {span!r} is not 'a-b'")
            data["startLine"], data["endLine"] = int(first), int(last)
        return data


class Narrower(Span):
    """A subclass inherits its parent's prepare."""


def test_prepare_rewrites_a_copy_of_the_arguments_by_their_wire_names():
    arguments = {"lineRange": "3-7"}
    assert Span.model_validate(arguments) == Span(start_line=3, end_line=7)
    assert arguments == {"lineRange": "3-7"}  # the caller's dict is left as it was
    assert Narrower.model_validate({"lineRange": "2-4"}).end_line == 4


def test_prepare_runs_before_the_aliases():
    seen.clear()
    assert Span.model_validate({"from": 5}).start_line == 5
    assert seen == [{"from": 5}]


def test_a_value_error_in_prepare_is_a_validation_error_with_its_message():
    with pytest.raises(ValidationError, match="lineRange 'x' is not 'a-b'"):
        Span.model_validate({"lineRange": "x"})


def test_a_model_without_prepare_still_takes_its_aliases():
    class Plain(ToolInput):
        aliases: ClassVar[dict[str, str]] = {"file": "path"}
        path: str

    assert Plain.model_validate({"file": "a.txt"}).path == "a.txt"
