"""The plugin template in the host's sdist and wheel.

The template lives beside core/ in the repository (``plugin-template/``), outside this project,
so hatch's own file selection never sees it. This hook puts it into the sdist at
``src/fsmcp/plugin_template`` and into the wheel at ``fsmcp/plugin_template``, where
``fsmcp new-plugin`` finds it once installed. A wheel built from the unpacked sdist (as ``uv
build`` and package indexes do) finds it already in the package, where no ``../plugin-template``
exists; an editable install renders the repository's copy (``fsmcp.cli.scaffold.template_dir``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PluginTemplateHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        project = Path(self.root)
        if version == "editable" or (project / "src" / "fsmcp" / "plugin_template" / "pyproject.toml").is_file():
            return
        template = project.parent / "plugin-template"
        if not (template / "pyproject.toml").is_file():
            raise FileNotFoundError(f"the plugin template is missing: {template}")
        # Hatch leaves out what building or testing the template in place writes (__pycache__, .venv, .pytest_cache).
        build_data["force_include"][str(template)] = "src/fsmcp/plugin_template" if self.target_name == "sdist" else "fsmcp/plugin_template"
