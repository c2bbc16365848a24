"""The sed and awk program checks: the commands in a script that reach outside the arguments.

Both scanners read a script the way the program's own parser does, closely enough to find
every command that runs a program, writes a file or reads one named inside the script (which
no path check can see). Where they are unsure they stop and refuse: a bracket expression such
as ``[/]`` ends a regex early here, so more of the script is read as commands, never less.
"""

from __future__ import annotations

import re


class _Stop(Exception):
    pass


# -- sed ----------------------------------------------------------------------------------------

_SED_REFUSED = {
    "e": "the e command runs a shell command",
    "w": "the w command writes a file",
    "W": "the W command writes a file",
    "r": "the r command reads a file named inside the script, which the path checks cannot see",
    "R": "the R command reads a file named inside the script, which the path checks cannot see",
}
_SED_SIMPLE = set("{}=dDgGhHnNpPxzF")
_SED_NUMBERED = set("lLqQ")
_SED_TEXT = set("aic")
_SED_LABELLED = set(":btTv")


def sed_problem(script: str) -> str | None:
    """Why a sed script may not run (it writes, reads a named file or runs a command), or None."""
    try:
        _SedScanner(script).run()
    except _Stop as stop:
        return str(stop)
    return None


class _SedScanner:
    def __init__(self, script: str):
        self.s = script
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def run(self) -> None:
        while True:
            self.skip(" \t\n;")
            if self.i >= len(self.s):
                return
            if self.peek() == "#":
                self.until("\n")
                continue
            self.address(second=False)
            self.skip(" \t")
            if self.peek() == ",":
                self.i += 1
                self.skip(" \t")
                self.address(second=True)
            self.skip(" \t!")
            self.command()

    def address(self, second: bool) -> None:
        c = self.peek()
        if c.isdigit() or (second and c in "+~"):
            self.i += 1
            self.skip("0123456789")
            if self.peek() == "~":
                self.i += 1
                self.skip("0123456789")
        elif c == "$":
            self.i += 1
        elif c in ("/", "\\"):
            if c == "\\":
                self.i += 1
            delimiter = self.peek()
            self.i += 1
            self.delimited(delimiter)
            self.skip("IM")

    def delimited(self, delimiter: str) -> None:
        """Move past one regex or replacement ending in ``delimiter``; a backslash escapes."""
        if delimiter in ("", "\n", "\\"):
            raise _Stop("the sed script could not be checked: a regex has no usable delimiter")
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
            elif c == delimiter:
                self.i += 1
                return
            elif c == "\n":
                break
            else:
                self.i += 1
        raise _Stop(f"the sed script could not be checked: a regex is not closed by {delimiter!r} (write \\{delimiter} for a literal one)")

    def until(self, stops: str) -> None:
        while self.i < len(self.s) and self.s[self.i] not in stops:
            self.i += 1

    def command(self) -> None:
        c = self.peek()
        self.i += 1
        if c in _SED_REFUSED:
            raise _Stop(_SED_REFUSED[c])
        if c in _SED_SIMPLE:
            return
        if c in _SED_NUMBERED:
            self.skip(" \t0123456789")
        elif c in _SED_TEXT:
            self.text()
        elif c in _SED_LABELLED:
            self.skip(" \t")
            self.until(";\n}")  # sed ends labels at the first of these, so no command hides in one
        elif c in ("s", "y"):
            delimiter = self.peek()
            self.i += 1
            self.delimited(delimiter)
            self.delimited(delimiter)
            if c == "s":
                self.flags()
        else:
            raise _Stop(f"the sed script could not be checked: {c!r} is not a sed command" if c else "the sed script ends after an address, with no command")

    def flags(self) -> None:
        while self.peek() and self.peek() in "gpiImMe0123456789w":
            flag = self.peek()
            if flag == "e":
                raise _Stop("the s command's e flag runs the result as a shell command")
            if flag == "w":
                raise _Stop("the s command's w flag writes a file")
            self.i += 1

    def text(self) -> None:
        # a\ starts the text on the next line; `a text` on this one. It runs to an unescaped newline.
        self.skip(" \t")
        if self.peek() == "\\":
            self.i += 1
            if self.peek() == "\n":
                self.i += 1
        while self.i < len(self.s) and self.s[self.i] != "\n":
            self.i += 2 if self.s[self.i] == "\\" else 1


# -- awk ----------------------------------------------------------------------------------------

_AWK_TOKEN = re.compile(
    r"""
      (?P<space>[ \t\r]+|\\\r?\n)
    | (?P<comment>\#[^\n]*)
    | (?P<nl>\n)
    | (?P<str>"(?:[^"\\\n]|\\.)*")
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<op>\|\||\|&|&&|>>|[<>!=]=|!~|\+\+|--|[-+*/%^]=|\S)
    """,
    re.VERBOSE,
)
# After these a `/` starts a regex; after anything else (a name, a number, `)`) it divides.
# Taking a regex for a division only shows more of the program as code, so that is the default.
_REGEX_AFTER_NAMES = {"print", "printf", "return", "case", "do", "else"}
_REGEX_AFTER_OPS = {"(", ",", "{", "}", ";", "!", "~", "!~", "&&", "||", "?", ":", "=", "+=", "-=", "*=", "/=",
                    "%=", "^=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "%", "^", "["}
_AWK_NAMES = {
    "system": "system() runs a shell command",
    "ARGV": "a program that changes ARGV or ARGC makes awk read files the path checks never saw; pass values with -v",
    "ARGC": "a program that changes ARGV or ARGC makes awk read files the path checks never saw; pass values with -v",
}
_AWK_OPS = {
    "|": "a pipe (print | \"cmd\", \"cmd\" | getline) runs a shell command",
    "|&": "a coprocess (|&) runs a shell command",
    "@": "gawk directives (@load, @include) and indirect calls load code or call functions by name",
}
_STATEMENT_END = {"\n", ";", "{", "}"}


def awk_problem(program: str) -> str | None:
    """Why an awk program may not run (it runs a command, writes or reads a named file), or None."""
    try:
        tokens = _awk_tokens(program)
    except _Stop as stop:
        return str(stop)
    for n, (kind, text) in enumerate(tokens):
        if kind == "name" and text in _AWK_NAMES:
            return _AWK_NAMES[text]
        if kind == "op" and text in _AWK_OPS:
            return _AWK_OPS[text]
        if kind == "name" and text == "getline" and any(t == ("op", "<") for t in _statement(tokens, n + 1)):
            return "getline < file reads a file named inside the program, which the path checks cannot see"
        if kind == "name" and text in ("print", "printf") and _redirects(_statement(tokens, n + 1)):
            return f"{text} > file writes a file; print to standard output"
    return None


def _awk_tokens(program: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(program):
        if program[i] == "/" and _regex_may_start(tokens):
            i = _awk_regex_end(program, i + 1)
            tokens.append(("regex", ""))
            continue
        match = _AWK_TOKEN.match(program, i)
        assert match is not None  # \S matches whatever else there is
        kind, text = match.lastgroup or "op", match.group()
        i = match.end()
        if kind in ("space", "comment"):
            continue
        if text == '"':
            raise _Stop("the awk program could not be checked: a string is not closed")
        tokens.append(("op", "\n") if kind == "nl" else (kind, text))
    return tokens


def _regex_may_start(tokens: list[tuple[str, str]]) -> bool:
    if not tokens:
        return True
    kind, text = tokens[-1]
    return (kind == "op" and text in _REGEX_AFTER_OPS | {"\n"}) or (kind == "name" and text in _REGEX_AFTER_NAMES)


def _awk_regex_end(program: str, i: int) -> int:
    while i < len(program):
        c = program[i]
        if c == "\\":
            i += 2
        elif c == "/":
            return i + 1
        elif c == "\n":
            break
        else:
            i += 1
    raise _Stop("the awk program could not be checked: a regex is not closed by '/' (write \\/ for a literal one)")


def _statement(tokens: list[tuple[str, str]], start: int) -> list[tuple[str, str]]:
    """The tokens from ``start`` to the end of the statement, with their nesting depth kept."""
    end = start
    while end < len(tokens) and not (tokens[end][0] == "op" and tokens[end][1] in _STATEMENT_END):
        end += 1
    return tokens[start:end]


def _redirects(statement: list[tuple[str, str]]) -> bool:
    # Inside print's own argument list a bare `>` is a redirection; in parentheses, a comparison.
    depth = 0
    for kind, text in statement:
        if kind != "op":
            continue
        if text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        elif text in (">", ">>") and depth <= 0:
            return True
    return False
