"""Reading an argument list the way the program will: options, their values, operands.

The parse decides three things: which options a rule refuses, which strings the program may
open as files (every one is path-checked), and which it never opens (patterns, programs,
separators). Where it cannot be sure it errs towards checking: an argument wrongly taken for a
file name costs a refusal, one wrongly taken for a pattern could cost an escape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


class Refused(Exception):
    """An argument a rule refuses; ``str()`` is the reason, ``argument`` what was refused."""

    def __init__(self, argument: str, reason: str):
        super().__init__(reason)
        self.argument = argument


@dataclass(frozen=True)
class Spec:
    """What one command's arguments mean, as far as confinement needs to know.

    Options are written as given on the command line (``"-e"``, ``"--regexp"``). GNU
    ``getopt_long`` accepts any unambiguous prefix of a long option, so a prefix of a refused
    option is refused too.
    """

    refuse: Mapping[str, str] = field(default_factory=dict)
    """Options refused outright, with the reason."""
    values: frozenset[str] = frozenset()
    """Options that take a value (attached, after ``=``, or as the next argument)."""
    literal: frozenset[str] = frozenset()
    """Options whose value is never a file name (a pattern, a program, a separator, a format)."""
    path_lists: frozenset[str] = frozenset()
    """Options whose value is a ``:``-separated list of file names."""
    pattern_first: frozenset[str] | None = None
    """When set, the first operand is a pattern or program unless one of these options is given."""
    literal_operands: bool = False
    max_operands: int | None = None
    max_operands_reason: str = ""
    permutes: bool = True
    """Options may follow operands (GNU getopt); False when the first operand ends the options."""
    implies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Arguments added in front when an option is given."""
    sandboxed: str | None = None
    """The program that runs this command, always as ``PROGRAM --sandbox ARGS...`` (gawk for every
    awk): what the command's own language can reach (commands, files named in a program) is
    refused by that program's sandbox, not by a check here. Where it is missing or knows no
    ``--sandbox``, the command does not run."""
    find_style: bool = False
    """``find``'s expression language instead of getopt."""
    value_checks: Mapping[str, Callable[[str], str | None]] = field(default_factory=dict)
    """For ``find``'s tests: why a test's literal argument may not be used, or None (``-printf %Y``)."""

    @property
    def long_names(self) -> set[str]:
        every = [*self.refuse, *self.values, *self.literal, *self.path_lists, *self.implies, *(self.pattern_first or ())]
        return {name for name in every if name.startswith("--")}


@dataclass
class Parsed:
    paths: list[str] = field(default_factory=list)
    """Strings the program may open as files: each is checked against the roots."""
    operands: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    added: list[str] = field(default_factory=list)
    """Arguments the rules put in front of the caller's."""


def parse(spec: Spec, args: list[str]) -> Parsed:
    """Classify ``args``; raises :class:`Refused` for what a rule forbids."""
    parsed = _parse_find(spec, args) if spec.find_style else _parse_getopt(spec, args)
    operands = parsed.operands
    if spec.pattern_first is not None and not (parsed.seen & spec.pattern_first) and operands:
        operands = operands[1:]  # the pattern or program, never opened
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        raise Refused(operands[spec.max_operands], spec.max_operands_reason)
    if not spec.literal_operands:
        parsed.paths.extend(operands)
    for option, extra in spec.implies.items():
        if option in parsed.seen:
            parsed.added.extend(a for a in extra if a not in parsed.added)
    return parsed


def _parse_getopt(spec: Spec, args: list[str]) -> Parsed:
    parsed = Parsed()
    options = True
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not options or arg == "-" or not arg.startswith("-"):
            options = options and spec.permutes
            parsed.operands.append(arg)
        elif arg == "--":
            options = False
        elif arg.startswith("--"):
            given, eq, value = arg[2:].partition("=")
            option = _long_option(spec, given, arg)
            parsed.seen.add(option or arg)
            if not eq and option in spec.values and i < len(args):
                value, eq = args[i], "="
                i += 1
            if eq:
                _take(spec, parsed, option, value)
        else:
            i = _short_cluster(spec, parsed, arg, args, i)
    return parsed


def _long_option(spec: Spec, given: str, arg: str) -> str | None:
    for name, reason in spec.refuse.items():
        if name.startswith("--") and name[2:].startswith(given):
            raise Refused(arg, reason)
    names = spec.long_names
    if f"--{given}" in names:
        return f"--{given}"
    matches = [name for name in names if name[2:].startswith(given)]
    return matches[0] if len(matches) == 1 else None


def _short_cluster(spec: Spec, parsed: Parsed, arg: str, args: list[str], i: int) -> int:
    for j in range(1, len(arg)):
        option = "-" + arg[j]
        if option in spec.refuse:
            raise Refused(arg, spec.refuse[option])
        parsed.seen.add(option)
        rest = arg[j + 1 :]
        if option in spec.values:
            if rest:
                _take(spec, parsed, option, rest)
            elif i < len(args):
                _take(spec, parsed, option, args[i])
                i += 1
            return i
        if rest:
            # Should this letter take a value after all (a program version the spec does not
            # know), the rest of the cluster is that value: check it as a path too.
            parsed.paths.append(rest)
    return i


def _take(spec: Spec, parsed: Parsed, option: str | None, value: str) -> None:
    if option in spec.literal:
        pass
    elif option in spec.path_lists:
        parsed.paths.extend(value.split(":"))
    else:
        parsed.paths.append(value)


def _parse_find(spec: Spec, args: list[str]) -> Parsed:
    parsed = Parsed()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in spec.refuse:
            raise Refused(arg, spec.refuse[arg])
        parsed.seen.add(arg)
        if arg in spec.literal:
            check = spec.value_checks.get(arg)
            problem = check(args[i]) if check is not None and i < len(args) else None
            if problem:
                raise Refused(args[i], problem)
            i += 1  # the test's own argument: a name pattern, a mode, a format, never a path
        elif not arg.startswith("-"):
            parsed.paths.append(arg)  # a starting point, or a file a test compares with (-newer)
    return parsed
