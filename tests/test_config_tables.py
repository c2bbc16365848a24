"""An unknown key stops the start at every level of fsmcp.toml, not only at the top."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _tools(tmp_path, toml: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "root").mkdir(exist_ok=True)
    (tmp_path / "fsmcp.toml").write_text(toml)
    return subprocess.run(
        [sys.executable, "-m", "fsmcp", "tools", "--config", str(tmp_path / "fsmcp.toml"), str(tmp_path / "root")],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, check=False,
    )


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        # A plugin that takes no options: its table would be dropped without a word.
        ("[plugins.read]\nmax_lines = 10\n", "[plugins.read] has max_lines, but plugin 'read' (fsmcp-read "),
        ("[plugins.write.limits]\nmax = 1\n", "[plugins.write] has limits, but plugin 'write' (fsmcp-write "),
        # Not a table where one is due.
        ("plugins = 5\n", "plugins must be a table of plugin tables, such as [plugins.shell]; it is 5"),
        ("[plugins]\nshell = 5\n", "plugins.shell must be a table, such as [plugins.shell]; it is 5"),
        # A plugin that checks its own table still names the key (unchanged).
        ('[plugins.shell]\nalow = ["git"]\n', "alow"),
        ('[plugins.secrets]\nad = ["*.x"]\n', "unknown option(s) ad"),
    ],
)
def test_an_unknown_key_in_a_table_stops_the_start_naming_it(tmp_path, toml, said):
    done = _tools(tmp_path, toml)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.startswith("fsmcp: error: "), done.stderr
    assert said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_table_a_plugin_reads_and_a_disabled_plugins_table_still_start(tmp_path):
    # A disabled plugin is not imported, so it cannot say what it takes: its table is let be.
    done = _tools(tmp_path, 'disable = ["read"]\n\n[plugins.shell]\nallow = ["cat"]\n\n[plugins.read]\nmax_lines = 10\n')
    assert done.returncode == 0, done.stderr
    assert "run_command" in done.stdout and "read_file" not in done.stdout
