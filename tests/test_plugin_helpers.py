"""The host's helpers that plugins share: output (number_runs), their options, and ``fsmcp.testing``'s."""

import os
import stat
import threading
from dataclasses import dataclass

import pytest

from fsmcp import ErrorCode, ToolError, number_runs, options_error, plugin_options
from fsmcp.testing import tree_of


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


def test_tree_of_never_opens_a_pipe(tmp_path):
    """A pipe is listed by its kind and mode, never opened: opened for reading, it would block
    until a writer came. Told without timing: while tree_of runs, the test tries to open the
    pipe for writing without blocking, which succeeds only once a reader has it open."""
    (tmp_path / "a.txt").write_text("a\n")
    os.mkfifo(tmp_path / "pipe", 0o640)
    found: dict = {}
    walk = threading.Thread(target=lambda: found.update(tree_of(tmp_path)))
    walk.start()
    opened = False
    while walk.is_alive() and not opened:
        try:
            os.close(os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK))  # closed at once: the reader sees its end
            opened = True
        except OSError:  # ENXIO: no reader
            pass
    walk.join()
    assert not opened, "tree_of opened the pipe (it blocks until a writer comes)"
    assert found == {"a.txt": ("file", b"a\n", 0o644 & ~_umask()), "pipe": ("other", stat.S_IFIFO, 0o640 & ~_umask())}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
