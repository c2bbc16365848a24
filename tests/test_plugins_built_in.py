"""``fsmcp plugins`` lists every built-in plugin whatever the configuration, with why one is
disabled, and each can be disabled by name as docs/hooks.md and docs/configuration.md say
(``--disable fsmcp.journal`` stopped the start: the journal, disabled, was no plugin it knew)."""

from __future__ import annotations

import os
import subprocess

import pytest

from fsmcp.testing import forked

BUILT_IN = {"fsmcp.roots", "fsmcp.text", "fsmcp.json", "fsmcp.consent", "secrets", "fsmcp.journal", "fsmcp.audit"}


def listed(tmp_path, *args: str) -> dict[str, str]:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    done = subprocess.run(
        forked("plugins", str(root), *args), capture_output=True, text=True, timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = {}
    for line in done.stdout.splitlines():
        name, rest = line.split(None, 1)
        lines[name] = rest.replace("built in", "", 1).strip() if rest.startswith("built in") else rest
    return lines


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), {"fsmcp.audit": "disabled: no audit_log (--audit-log FILE)"}),
        (("--audit-log", "LOG"), {"fsmcp.audit": "default"}),
        (("--audit-log", "LOG", "--disable", "fsmcp.audit"), {"fsmcp.audit": "disabled"}),
        (("--disable", "fsmcp.journal"), {"fsmcp.journal": "disabled"}),
        (("--journal", "off"), {"fsmcp.journal": 'disabled: journal = "off" (--journal off)'}),
        (("--no-ask",), {"fsmcp.consent": "disabled: ask_user = false (--no-ask)"}),
        (("--disable", "fsmcp.consent,secrets,fsmcp.json"), {"fsmcp.consent": "disabled", "secrets": "disabled", "fsmcp.json": "disabled"}),
    ],
)
def test_every_built_in_is_listed_with_its_status(tmp_path, args, expected):
    args = tuple(str(tmp_path / a) if a == "LOG" else a for a in args)
    got = listed(tmp_path, *args)
    print(got)
    assert BUILT_IN <= set(got)
    statuses = {name: got[name] for name in BUILT_IN}
    assert statuses == {**dict.fromkeys(BUILT_IN, "default"), "fsmcp.audit": "disabled: no audit_log (--audit-log FILE)", **expected}


def test_a_server_with_the_journal_disabled_by_name_serves_and_keeps_no_journal(tmp_path):
    from fsmcp.testing import RawStdio

    root = tmp_path / "root"
    root.mkdir()
    server = RawStdio(str(root), "--disable", "fsmcp.journal", env={"XDG_STATE_HOME": str(tmp_path / "state")})
    try:
        server.initialize()
        server.call(1, "write_file", {"path": "a.txt", "content": "x"})
        wrote = server.text(1)
    finally:
        server.close()
    print(wrote)
    assert wrote[0] is False and (root / "a.txt").read_text() == "x", wrote
    assert not (tmp_path / "state" / "fsmcp" / "journal").exists()
