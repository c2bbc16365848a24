"""Settings: what the operator chose, from ``fsmcp.toml`` and the command line."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from .errors import ErrorCode, ToolError

T = TypeVar("T")

DEFAULT_BUDGET = 80_000
TRANSPORTS = ("stdio", "http")
MAX_WORKERS = 256
SANDBOX_MODES = ("auto", "require", "off")


class ConfigError(Exception):
    """The configuration cannot be used; the message names the setting and what to change."""


@dataclass
class Settings:
    """Every setting of the host. Plugin options live under ``plugins[<plugin name>]``."""

    roots: list[str] = field(default_factory=list)
    read_only: bool = False
    enable: list[str] = field(default_factory=list)
    disable: list[str] = field(default_factory=list)
    format: str = "text"
    policy: str = "roots"
    require_workspace: bool = False
    """Refuse every path until the client has called ``set_workspace`` (plugin fsmcp-workspace)."""
    budget: int = DEFAULT_BUDGET
    """Characters of text one tool result may carry before it is truncated with a notice."""
    max_file_bytes: int = 50 * 1024 * 1024
    """Largest file a tool writes, or reads whole into memory (binary content, edits)."""
    transport: str = "stdio"
    """``stdio`` or ``http`` (streamable HTTP, see docs/http.md)."""
    host: str = "127.0.0.1"
    """The address ``--transport http`` listens on."""
    port: int = 8765
    max_sessions: int = 256
    """HTTP sessions open at once in each worker process (about 41 kB each); past it a new one is refused with 503."""
    workers: int | None = None
    """HTTP worker processes serving the one port; None: one per core (``--workers 1``: a single process)."""
    token_file: str | None = None
    """A file holding the bearer token HTTP requests must carry (else ``FSMCP_TOKEN``)."""
    allow_hosts: list[str] = field(default_factory=list)
    """``Host`` header values accepted over HTTP besides the loopback names."""
    allow_origins: list[str] = field(default_factory=list)
    """``Origin`` header values accepted over HTTP besides the loopback origins."""
    journal: str = ""
    """The change journal's directory (default: ``$XDG_STATE_HOME/fsmcp/journal``), or ``off``."""
    journal_max_bytes: int = 256 * 1024 * 1024
    """Bytes of saved files the journal keeps at most, oldest changes dropped first."""
    journal_max_changes: int = 1000
    """Changes the journal keeps at most, oldest dropped first."""
    sandbox: str = "auto"
    """Confining started programs with Landlock: ``auto`` and ``require`` (the same since tools
    that start programs are withheld under both where the kernel cannot confine them; ``require``
    stays for configurations that name it) or ``off`` (programs start unconfined)."""
    stale_guard: bool = True
    """Refuse a change over a file that changed on disk since this session read it (EDIT_CONFLICT)."""
    audit_log: str | None = None
    """A file that gets one JSON line per tool call (see docs/configuration.md)."""
    audit_log_max_bytes: int = 10 * 1024 * 1024
    """The audit log's size at which it is rotated to ``FILE.1`` (and older ones shifted)."""
    audit_log_keep: int = 5
    """How many rotated audit logs are kept."""
    ask_user: bool = True
    """Let a read a policy refuses with a question (``fsmcp.Refusal``) be put to the client's user
    (MCP elicitation: allow once / deny)."""
    ask_timeout: float = 120.0
    """Seconds the user has to answer before the refusal stands."""
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.asked: set[str] = set()
        """The plugins whose table was asked for: the host refuses a table no plugin reads at start-up."""

    def options(self, plugin: str) -> dict[str, Any]:
        self.asked.add(plugin)
        return self.plugins.get(plugin, {})


_KNOWN = {f.name for f in fields(Settings)}


def plugin_options(cls: type[T], raw: dict[str, Any], plugin: str) -> T:
    """A plugin's ``[plugins.<plugin>]`` table as the dataclass ``cls``, its defaults filled in.

    A key ``cls`` has no field for is refused, naming the known ones. Check the values after,
    refusing a bad one with :func:`options_error`.
    """
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - known)
    if unknown:
        raise options_error(plugin, f"has unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return cls(**raw)


def options_error(plugin: str, problem: str) -> ToolError:
    """What a tool answers when the operator's ``[plugins.<plugin>]`` table is wrong."""
    return ToolError(ErrorCode.INTERNAL_ERROR, f"the server's [plugins.{plugin}] configuration {problem}; the operator must fix fsmcp.toml")


def load_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    data = {key.replace("-", "_"): value for key, value in data.items()}
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(_KNOWN))}"
        )
    roots = data.get("roots")
    if roots is not None:
        if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
            example = json.dumps([roots] if isinstance(roots, str) else ["work", "notes:ro"])
            raise ConfigError(f"config file {path}: roots must be a list of directories, such as roots = {example}")
        # Relative roots in a config file mean relative to the file, not to wherever fsmcp starts.
        data["roots"] = [_relative_to(path.parent, r) for r in roots]
    for key in ("token_file", "journal", "audit_log"):
        value = data.get(key)
        if isinstance(value, str) and not (key == "journal" and value in ("", "off")):  # the journal's off: no place
            data[key] = _relative_to(path.parent, value)
    return data


def _relative_to(base: Path, spec: str) -> str:
    if spec.startswith(("/", "~")):
        return spec
    return str(base.resolve() / spec)


def build_settings(file_values: dict[str, Any], cli_values: dict[str, Any]) -> Settings:
    """Merge the config file and the command line; the command line wins.

    ``enable`` from the command line replaces the file's list; ``disable`` lists add up, and a
    name given to ``--enable`` is taken out of the file's ``disable``.
    """
    merged: dict[str, Any] = dict(file_values)
    for key, value in cli_values.items():
        if value is None or (key in ("roots", "enable", "disable") and not value):
            continue
        if value is False and key in merged:
            continue
        merged[key] = value
    cli_enable = list(cli_values.get("enable") or [])
    merged["disable"] = _unique(
        [d for d in file_values.get("disable", []) if d not in cli_enable] + list(cli_values.get("disable") or [])
    )
    try:
        settings = Settings(**merged)
    except TypeError as exc:
        raise ConfigError(str(exc)) from None
    _check(settings)
    return settings


def _check(settings: Settings) -> None:
    if not isinstance(settings.budget, int) or settings.budget < 1000:
        raise ConfigError("budget must be a whole number of characters, at least 1000")
    if not isinstance(settings.max_file_bytes, int) or settings.max_file_bytes < 1:
        raise ConfigError("max_file_bytes must be a positive whole number")
    if settings.transport not in TRANSPORTS:
        raise ConfigError(f"transport must be one of {', '.join(TRANSPORTS)}, not {settings.transport!r}")
    if settings.sandbox not in SANDBOX_MODES:
        raise ConfigError(f"sandbox must be one of {', '.join(SANDBOX_MODES)}, not {settings.sandbox!r}")
    if not isinstance(settings.port, int) or not 0 <= settings.port <= 65535:
        raise ConfigError("port must be a whole number from 0 to 65535 (0: any free port)")
    if not isinstance(settings.max_sessions, int) or isinstance(settings.max_sessions, bool) or settings.max_sessions < 1:
        raise ConfigError("max_sessions must be a whole number of HTTP sessions, 1 or more")
    if settings.workers is not None and (not isinstance(settings.workers, int) or isinstance(settings.workers, bool) or not 1 <= settings.workers <= MAX_WORKERS):
        raise ConfigError(f"workers must be a whole number of HTTP worker processes from 1 to {MAX_WORKERS} (leave it out: one per core)")
    if not isinstance(settings.host, str) or not settings.host:
        raise ConfigError("host must be an address or host name to listen on, such as 127.0.0.1")
    if settings.token_file is not None and not isinstance(settings.token_file, str):
        raise ConfigError("token_file must be the path of a file holding the bearer token")
    if not isinstance(settings.journal, str):
        raise ConfigError('journal must be a directory for the change journal, or "off"')
    for name in ("journal_max_bytes", "journal_max_changes"):
        value = getattr(settings, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{name} must be a positive whole number")
    if settings.audit_log is not None and (not isinstance(settings.audit_log, str) or not settings.audit_log):
        raise ConfigError("audit_log must be the path of the file to append the audit log to")
    if not isinstance(settings.audit_log_max_bytes, int) or settings.audit_log_max_bytes < 4096:
        raise ConfigError("audit_log_max_bytes must be a whole number of bytes, at least 4096")
    if not isinstance(settings.audit_log_keep, int) or settings.audit_log_keep < 0:
        raise ConfigError("audit_log_keep must be a whole number of rotated files to keep, 0 or more")
    for name in ("require_workspace", "stale_guard", "ask_user"):
        if not isinstance(getattr(settings, name), bool):
            raise ConfigError(f"{name} must be true or false")
    if not isinstance(settings.ask_timeout, (int, float)) or isinstance(settings.ask_timeout, bool) or not 0 < settings.ask_timeout <= 86400:
        raise ConfigError("ask_timeout must be a number of seconds, more than 0 and at most 86400")
    for name in ("roots", "enable", "disable", "allow_hosts", "allow_origins"):
        value = getattr(settings, name)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{name} must be a list of strings")
    if not isinstance(settings.plugins, dict):
        raise ConfigError(f"plugins must be a table of plugin tables, such as [plugins.shell]; it is {settings.plugins!r}")
    for name, table in settings.plugins.items():
        if not isinstance(table, dict):
            raise ConfigError(f"plugins.{name} must be a table, such as [plugins.{name}]; it is {table!r}")


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
