"""The host's helpers that plugins share: output (number_runs) and their options."""

from dataclasses import dataclass

import pytest

from fsmcp import ErrorCode, ToolError, number_runs, options_error, plugin_options


def test_number_runs_joins_consecutive_numbers():
    assert number_runs([1, 2, 3, 5]) == "1-3, 5"
    assert number_runs([4]) == "4"
    assert number_runs([1, 3, 4, 7, 8, 9]) == "1, 3-4, 7-9"
    assert number_runs([]) == ""


def test_plugin_options_fill_defaults_and_refuse_unknown_keys():
    @dataclass(frozen=True)
    class Limits:
        most: int = 3
        least: int = 1

    assert plugin_options(Limits, {"most": 5}, "demo") == Limits(most=5, least=1)
    with pytest.raises(ToolError) as refused:
        plugin_options(Limits, {"most": 5, "mots": 2}, "demo")
    assert refused.value.code is ErrorCode.INTERNAL_ERROR
    assert refused.value.message == (
        "the server's [plugins.demo] configuration has unknown option(s) mots; known: least, most; the operator must fix fsmcp.toml"
    )
    assert options_error("demo", "is wrong").message.startswith("the server's [plugins.demo] configuration is wrong;")
