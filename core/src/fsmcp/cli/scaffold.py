"""``fsmcp new-plugin NAME``: the plugin template rendered into a new plugin package."""

from __future__ import annotations

import importlib.util
import re
import secrets
import shlex
import shutil
import sys
from importlib.metadata import entry_points
from pathlib import Path

SKIPPED = {"__pycache__", ".venv", ".pytest_cache", "dist", "build"}
_VALID = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


class ScaffoldError(Exception):
    """The plugin cannot be made as asked; the message says what to change."""


def template_dir() -> Path:
    """The template: the copy an installed fsmcp carries in its package, else (an editable install,
    the clone) the repository's ``plugin-template/`` beside ``core/``."""
    here = Path(__file__).resolve().parents[1]  # the fsmcp package
    for template in (here / "plugin_template", here.parents[2] / "plugin-template"):
        if (template / "pyproject.toml").is_file():
            return template
    raise ScaffoldError(f"the plugin template is missing from this installation of fsmcp ({here / 'plugin_template'}); reinstall fsmcp")


def replacements(name: str) -> dict[str, str]:
    """The template's names and what each becomes, longest first so none is replaced inside another."""
    words = name.split("_")
    return {
        "fsmcp-wordcount": "fsmcp-" + "-".join(words),  # distribution
        "fsmcp_wordcount": "fsmcp_" + name,  # import package
        "WordCount": "".join(w.capitalize() for w in words),  # model names
        "Word count": " ".join(words).capitalize(),  # tool title
        "word_count": name,  # tool
        "wordcount": name,  # plugin (entry point)
    }


def check_name(name: str) -> None:
    if not _VALID.fullmatch(name):
        raise ScaffoldError(
            f"{name!r} cannot name a plugin: use lower-case letters and digits, words joined by single "
            "underscores, starting with a letter (such as linecount or line_count)"
        )
    taken = {ep.name: ep.value for ep in entry_points(group="fsmcp")}
    if name in taken:
        raise ScaffoldError(f"a plugin named {name!r} is already installed ({taken[name]}); choose another name")


def render(name: str, parent: Path, template: Path | None = None) -> Path:
    """Write the template as plugin ``name`` into ``parent/fsmcp-<name>``; returns that directory.

    All or nothing: the package is written beside its destination and moved into place whole.
    """
    check_name(name)
    template = template or template_dir()
    table = replacements(name)
    pattern = re.compile("|".join(re.escape(old) for old in table))

    def swap(text: str) -> str:
        return pattern.sub(lambda match: table[match.group(0)], text)

    if not parent.is_dir():
        raise ScaffoldError(f"{parent} is not an existing directory; create it or choose another --dir")
    destination = parent / table["fsmcp-wordcount"]
    if destination.exists() or destination.is_symlink():
        raise ScaffoldError(f"{destination} already exists; remove it or choose another --dir or NAME")
    staging = parent / f".{destination.name}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        for source in sorted(template.rglob("*")):
            relative = source.relative_to(template)
            if not source.is_file() or _skipped(relative):
                continue
            target = staging / swap(str(relative))
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                target.write_text(swap(source.read_text(encoding="utf-8")), encoding="utf-8")
            except UnicodeDecodeError:
                shutil.copyfile(source, target)
        staging.rename(destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return destination


def next_steps(made: Path) -> list[str]:
    """Shell commands that install ``made`` into the environment running this fsmcp, then run its tests.

    The environment is this interpreter's: a clone's ``.venv`` (which has uv, not pip), a virtual
    environment of the user's, a uv tool's. Its pip when it has one, else its uv, else uv on PATH.
    A uv project's environment (a clone's) gets the plugin added to the project: ``uv sync``
    there installs exactly what the project lists and would remove a plugin installed beside it.
    """
    python = shlex.quote(sys.executable)
    here = shlex.quote(str(made.absolute()))
    # The environment's own uv first: `uv run` puts the clone's .venv/bin on PATH, the user's shell does not.
    uv = f"{python} -m uv" if importlib.util.find_spec("uv") is not None else "uv"
    project = uv_project()
    if project is not None:
        install = f"cd {shlex.quote(str(project))} && {uv} add --editable {here}"
        if importlib.util.find_spec("pytest") is None:
            install += f" && {uv} add --dev pytest"
    elif importlib.util.find_spec("pip") is not None:
        install = f"{python} -m pip install -e {here} pytest"
    else:
        install = f"{uv} pip install --python {python} -e {here} pytest"
    return [install, f"cd {here} && {python} -m pytest"]


def uv_project() -> Path | None:
    """The uv project whose environment this interpreter runs in (a clone's ``.venv``), if any."""
    prefix = Path(sys.prefix)
    try:
        made_by_uv = re.search(r"^uv\s*=", (prefix / "pyvenv.cfg").read_text(), re.MULTILINE) is not None
    except OSError:
        return None
    root = prefix.parent
    return root if made_by_uv and (root / "pyproject.toml").is_file() and (root / "uv.lock").is_file() else None


def _skipped(relative: Path) -> bool:
    # What building or testing the template in place leaves behind is not part of it.
    return relative.suffix == ".pyc" or any(part in SKIPPED or part.endswith(".egg-info") for part in relative.parts)
