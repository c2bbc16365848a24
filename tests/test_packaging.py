"""Each distribution is ready for a package index, and the workspace serves the families alone.

Building every distribution and installing it from its wheels takes minutes: CI does that
(.ci/wheels.py); ``test_new_plugin.py`` builds the host from its sdist. These are the checks
that read the source.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FAMILIES = sorted(p for p in (REPO / "plugins").iterdir() if (p / "pyproject.toml").is_file())
DISTRIBUTIONS = [REPO / "core", *FAMILIES]
TEMPLATE = REPO / "plugin-template"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def project(directory: Path) -> dict:
    return tomllib.loads((directory / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> list[str]:
    return [re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0] for r in requirements]


def test_the_all_extra_installs_every_family_and_nothing_else():
    """A new family under plugins/ is one line in core/pyproject.toml's `all` extra."""
    assert sorted(names(project(REPO / "core")["optional-dependencies"]["all"])) == sorted(project(p)["name"] for p in FAMILIES)


def test_the_workspace_installs_the_families_through_the_all_extra_and_not_the_template():
    root = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert root["project"]["dependencies"] == ["fsmcp[all]"]
    assert set(root["tool"]["uv"]["sources"]) == {project(p)["name"] for p in DISTRIBUTIONS}
    assert "fsmcp-wordcount" not in (REPO / "pyproject.toml").read_text()


@pytest.mark.parametrize("directory", [*DISTRIBUTIONS, TEMPLATE], ids=lambda p: p.name)
def test_each_distribution_says_what_an_index_shows(directory):
    meta = project(directory)
    assert meta["readme"] == "README.md" and (directory / "README.md").is_file()
    assert meta["license"] == "MIT"
    assert meta["requires-python"] == ">=3.11"
    assert "Programming Language :: Python :: 3 :: Only" in meta["classifiers"]
    assert not [c for c in meta["classifiers"] if c.startswith("License ::")], "the licence is the SPDX expression alone"
    licence = (directory / "LICENSE").read_text()
    assert licence.startswith("MIT License\n")
    if directory != TEMPLATE:
        assert licence == (REPO / "LICENSE").read_text()


@pytest.mark.parametrize("directory", [*DISTRIBUTIONS, TEMPLATE], ids=lambda p: p.name)
def test_no_readme_an_index_shows_links_into_this_repository(directory):
    """On an index's page a relative link resolves against the index: it leads nowhere."""
    links = LINK.findall((directory / "README.md").read_text())
    assert [t for t in links if not t.startswith(("https://", "#"))] == []


def test_plugins_pin_the_host_to_one_minor_series():
    """docs/plugins.md, "Versions": a plugin depends on fsmcp>=X.Y,<X.(Y+1) (before 1.0)."""
    host = re.search(r'__version__ = "(\d+)\.(\d+)\.\d+"', (REPO / "core/src/fsmcp/api/__init__.py").read_text())
    assert host, "fsmcp.__version__ not found"
    major, minor = int(host[1]), int(host[2])
    pin = f"fsmcp>={major}.{minor},<{major}.{minor + 1}"
    for directory in [*FAMILIES, TEMPLATE]:
        assert pin in project(directory)["dependencies"], directory.name
    assert all(r.endswith(f">={major}.{minor},<{major}.{minor + 1}") for r in project(REPO / "core")["optional-dependencies"]["all"])


def test_the_readmes_serve_command_offers_the_families_and_no_example_tool(tmp_path):
    """`uv run fsmcp serve` runs in this environment: its plugins are the families, nothing else."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # conftest.py's, which adds the template
    done = subprocess.run(
        [sys.executable, "-m", "fsmcp", "tools", str(tmp_path)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    offered = dict(line.split()[:2] for line in done.stdout.splitlines())  # tool, plugin, definition size
    assert sorted(set(offered.values())) == sorted(p.name for p in FAMILIES)
    assert "word_count" not in offered
