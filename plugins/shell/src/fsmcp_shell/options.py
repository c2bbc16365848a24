"""The operator's ``[plugins.shell]`` section: what may run, for how long, with what around it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fsmcp import ErrorCode, ToolError, options_error
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

DEFAULT_ALLOW = ("grep", "sed", "awk", "find", "cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "diff", "file", "stat", "ls", "du", "rg")
"""The default allowlist: every one only reads, once the argument rules have been applied."""

READ_ONLY_COMMANDS = frozenset(DEFAULT_ALLOW) | {"egrep", "fgrep", "gawk", "mawk", "nawk"}
"""Commands known to change nothing once their argument rules are applied."""

# Each of these runs other programs or arbitrary code that no argument rule can see: listing one
# would make the allowlist and every rule meaningless, so it takes allow_unconfined.
UNCONFINED = {
    "is a shell: it runs any command": (
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "csh", "tcsh", "fish", "rbash", "busybox",
    ),
    "runs the command named in its arguments": (
        "env", "xargs", "nice", "nohup", "timeout", "stdbuf", "setsid", "time", "chroot", "sudo", "doas", "su",
        "runuser", "ionice", "taskset", "chrt", "flock", "watch", "parallel", "strace", "ltrace", "gdb", "unshare",
        "nsenter", "script", "expect", "unbuffer", "systemd-run", "firejail", "at", "batch", "prlimit", "setpriv",
        "fakeroot", "sg", "runcon", "valgrind", "tmux", "screen", "npx", "pnpx", "ld.so", "ldd", "capsh", "bwrap",
        "numactl", "cgexec", "pkexec", "faketime", "torsocks", "proxychains", "proxychains4", "chpst",
    ),
    "runs programs from its input or configuration": (
        "git", "make", "tar", "ssh", "scp", "rsync", "vi", "vim", "nvim", "ed", "ex", "emacs", "less", "more", "man",
        "java", "jshell", "julia", "Rscript", "R", "osascript", "pwsh", "deno", "bun", "irb", "sqlite3", "cmake",
        "zip", "perldoc", "perlbug", "npm", "yarn", "pnpm", "pip", "pip3", "ninja", "meson",
    ),
}
_INTERPRETER = re.compile(r"^(python|pypy|pydoc|perl|ruby|php|lua|node|tclsh|wish)[0-9.]*$")
# Compilers and the dynamic loader, by any prefix or version: a compiler runs the program its
# -wrapper names, the loader any program given it (ld-linux-x86-64.so.2 ./x).
_RUNNER = re.compile(r"^([a-z0-9_]+-linux-gnu[a-z]*-)?(gcc|g\+\+|cc|c\+\+|c89-gcc|c99-gcc|clang|clang\+\+|tcc)(-[0-9.]+)?$|^ld-linux.*\.so(\.[0-9]+)*$")
_BARE_NAME = re.compile(r"^[A-Za-z0-9_+][A-Za-z0-9._+-]*$")


def unconfined_reason(name: str) -> str | None:
    for reason, names in UNCONFINED.items():
        if name in names:
            return reason
    if _INTERPRETER.match(name):
        return "is an interpreter: it runs any program"
    if _RUNNER.match(name):
        return "runs the program its arguments name (a compiler's -wrapper, the loader)"
    return None


class ShellOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: tuple[str, ...] = DEFAULT_ALLOW
    allow_unconfined: bool = False
    allow_shell: bool = False
    allow_network: bool = False
    require_undo: bool = False
    read_only_commands: tuple[str, ...] = ()
    max_timeout: float = Field(60, gt=0)
    kill_grace: float = Field(3, ge=0)
    path: str | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("allow", "read_only_commands")
    @classmethod
    def _bare_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in value if not _BARE_NAME.match(n)]
        if bad:
            raise ValueError(f"{', '.join(map(repr, bad))}: each entry is a bare program name found on PATH, with no '/'")
        return value

    @model_validator(mode="after")
    def _confined(self) -> ShellOptions:
        if self.allow_unconfined:
            return self
        problems = [f"{name} {reason}" for name in self.allow if (reason := unconfined_reason(name))]
        if problems:
            raise ValueError(
                "allow lists " + "; ".join(problems) + ". With it no argument rule confines the model any more: "
                "set allow_unconfined = true to accept that, or allow_shell = true to offer run_shell instead"
            )
        return self

    @classmethod
    def load(cls, section: Mapping[str, Any]) -> ShellOptions:
        try:
            return cls.model_validate(dict(section))
        except ValidationError as exc:
            problems = []
            for err in exc.errors(include_url=False):
                where = ".".join(str(p) for p in err["loc"])
                message = err["msg"].removeprefix("Value error, ")
                problems.append(f"{where}: unknown setting" if err["type"] == "extra_forbidden" else f"{where}: {message}" if where else message)
            raise options_error("shell", "is wrong: " + "; ".join(problems)) from None

    def is_read_only(self, command: str) -> bool:
        return command in READ_ONLY_COMMANDS or command in self.read_only_commands

    @property
    def all_read_only(self) -> bool:
        return all(self.is_read_only(name) for name in self.allow)


def checked_timeout(asked: float, options: ShellOptions) -> float:
    if asked > options.max_timeout:
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"timeout {asked:g} s is over this server's limit of {options.max_timeout:g} s; ask for at most that, or for less work",
        )
    return asked
