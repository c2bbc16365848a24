"""The argument rules of each command this plugin knows (docs/tools/shell.md gives the reasons).

A command that is not here (one the operator added) gets no rule but the path checks, which
then treat every argument, and every tail of a short-option cluster, as a possible file name.
"""

from __future__ import annotations

from .argv import Spec


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_FOLLOWS = "follows symbolic links, which can lead out of the allowed directories"
_RUNS = "runs another program"
_LIST_FILE = "reads a list of file names from a file, which the path checks cannot see"
_TARGET_TYPE = "reports the type of what a link points to, which may lie outside the allowed directories"

_GREP = Spec(
    refuse={"-R": f"{_FOLLOWS}; use -r, which does not", "--dereference-recursive": f"{_FOLLOWS}; use -r, which does not"},
    values=_set("-e", "--regexp", "-f", "--file", "-m", "--max-count", "--label", "-d", "--directories", "-D", "--devices",
                "--include", "--exclude", "--exclude-from", "--exclude-dir", "-A", "-B", "-C", "--after-context",
                "--before-context", "--context", "--binary-files", "--group-separator"),
    literal=_set("-e", "--regexp", "--label", "--include", "--exclude", "--exclude-dir", "--group-separator"),
    pattern_first=_set("-e", "--regexp", "-f", "--file"),
)

_SED = Spec(
    refuse={
        "-i": "edits files in place; run_command only reads (use edit_file or write_file)",
        "--in-place": "edits files in place; run_command only reads (use edit_file or write_file)",
        "--follow-symlinks": "only serves -i, which is refused",
    },
    values=_set("-e", "--expression", "-f", "--file", "-l", "--line-length"),
    literal=_set("-e", "--expression", "-l", "--line-length"),
    pattern_first=_set("-e", "--expression", "-f", "--file"),
    # sed --sandbox refuses e, r, R, w, W and the s command's e and w flags, in -e and -f scripts alike.
    sandboxed="sed",
)

_WRITES = "writes a file (gawk's sandbox does not cover its own options)"
_AWK = Spec(
    refuse={
        "-W": "implementation options (-W dump-variables=file writes a file)",
        "-d": _WRITES, "--dump-variables": _WRITES, "-o": _WRITES, "--pretty-print": _WRITES, "-p": _WRITES, "--profile": _WRITES,
        "-D": "starts gawk's debugger, which runs commands", "--debug": "starts gawk's debugger, which runs commands",
    },
    values=_set("-F", "--field-separator", "-v", "--assign", "-e", "--source", "-f", "--file", "-E", "--exec", "-i", "--include",
                "-l", "--load"),
    literal=_set("-F", "--field-separator", "-v", "--assign", "-e", "--source", "-l", "--load"),
    pattern_first=_set("-e", "--source", "-f", "--file", "-E", "--exec"),
    # awk takes everything after the program as operands (files or var=value): `-F x` there is a file.
    permutes=False,
    # gawk --sandbox refuses system(), pipes, coprocesses, print > file, getline < file, extensions
    # (@load, -l) and files added to ARGV, in the program and in -f, -E and -i files alike.
    sandboxed="gawk",
)

_RG = Spec(
    refuse={
        "--pre": f"{_RUNS} on every file searched", "--pre-glob": "only serves --pre, which is refused",
        "-L": _FOLLOWS, "--follow": _FOLLOWS,
        "-z": "runs decompression programs on the files searched", "--search-zip": "runs decompression programs on the files searched",
        "--hostname-bin": _RUNS,
    },
    values=_set("-e", "--regexp", "-f", "--file", "--pre", "--pre-glob", "--dfa-size-limit", "-E", "--encoding", "--engine",
                "-m", "--max-count", "--regex-size-limit", "-j", "--threads", "-g", "--glob", "--iglob", "--ignore-file",
                "-d", "--max-depth", "--max-filesize", "-t", "--type", "-T", "--type-not", "--type-add", "--type-clear",
                "-A", "--after-context", "-B", "--before-context", "--color", "--colors", "-C", "--context",
                "--context-separator", "--field-context-separator", "--field-match-separator", "--hostname-bin",
                "--hyperlink-format", "-M", "--max-columns", "--path-separator", "-r", "--replace", "--sort", "--sortr",
                "--generate"),
    literal=_set("-e", "--regexp", "-g", "--glob", "--iglob", "--type-add", "-r", "--replace", "--context-separator",
                 "--field-context-separator", "--field-match-separator", "--path-separator", "--hyperlink-format", "--colors"),
    pattern_first=_set("-e", "--regexp", "-f", "--file", "--files", "--type-list"),
)

_FIND = Spec(
    refuse={
        "-exec": _RUNS, "-execdir": _RUNS, "-ok": _RUNS, "-okdir": _RUNS,
        "-delete": "deletes files; run_command only reads (use delete_file)",
        "-fprint": "writes a file", "-fprint0": "writes a file", "-fprintf": "writes a file", "-fls": "writes a file",
        "-files0-from": "reads the starting points from a file, which the path checks cannot see",
        "-L": _FOLLOWS, "-follow": _FOLLOWS,
        "-xtype": _TARGET_TYPE,
    },
    literal=_set("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname",
                 "-ilname", "-perm", "-printf", "-regextype", "-size", "-type", "-xtype", "-user", "-group", "-fstype",
                 "-context", "-D", "-uid", "-gid", "-inum", "-links", "-amin", "-atime", "-cmin", "-ctime", "-mmin",
                 "-mtime", "-used", "-maxdepth", "-mindepth", "-newermt", "-newerat", "-newerct"),
    find_style=True,
    value_checks={"-printf": lambda fmt: f"%Y {_TARGET_TYPE}" if "%Y" in fmt.replace("%%", "") else None},
)

_SORT = Spec(
    refuse={
        "-o": "writes its output to a file; run_command only reads", "--output": "writes its output to a file; run_command only reads",
        "-T": "writes temporary files into a directory", "--temporary-directory": "writes temporary files into a directory",
        "--compress-program": _RUNS, "--files0-from": _LIST_FILE,
    },
    values=_set("-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "-T", "--temporary-directory", "-o",
                "--output", "--random-source", "--batch-size", "--parallel", "--compress-program", "--files0-from", "--sort"),
    literal=_set("-k", "--key", "-t", "--field-separator"),
)

_UNIQ = Spec(
    values=_set("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"),
    max_operands=1,
    max_operands_reason="uniq writes its output to a second file operand; run_command only reads (give one input file)",
)

_CUT = Spec(
    values=_set("-b", "--bytes", "-c", "--characters", "-d", "--delimiter", "-f", "--fields", "--output-delimiter"),
    literal=_set("-d", "--delimiter", "--output-delimiter"),
)

_TR = Spec(literal_operands=True)  # tr reads standard input only; its operands are character sets

_DIFF = Spec(
    refuse={"-l": "pipes its output through the pr program", "--paginate": "pipes its output through the pr program"},
    values=_set("-C", "-U", "-W", "--width", "-F", "--show-function-line", "--label", "--tabsize", "-x", "--exclude", "-X",
                "--exclude-from", "-S", "--starting-file", "--from-file", "--to-file", "-I", "--ignore-matching-lines", "-D",
                "--ifdef", "--line-format", "--old-line-format", "--new-line-format", "--unchanged-line-format",
                "--old-group-format", "--new-group-format", "--unchanged-group-format", "--changed-group-format",
                "--horizon-lines", "--palette"),
    literal=_set("-F", "--show-function-line", "--label", "-x", "--exclude", "-I", "--ignore-matching-lines", "-D", "--ifdef",
                 "--line-format", "--old-line-format", "--new-line-format", "--unchanged-line-format", "--old-group-format",
                 "--new-group-format", "--unchanged-group-format", "--changed-group-format", "--palette"),
    # diff -r follows symbolic links it meets inside the directories, out of the roots too.
    implies={"-r": ("--no-dereference",), "--recursive": ("--no-dereference",)},
)

_FILE = Spec(
    refuse={
        "-f": _LIST_FILE, "--files-from": _LIST_FILE,
        "-C": "writes a compiled magic file", "--compile": "writes a compiled magic file",
        "-z": "runs decompression programs on the files", "--uncompress": "runs decompression programs on the files",
        "-Z": "runs decompression programs on the files", "--uncompress-noreport": "runs decompression programs on the files",
        "-S": "turns off file's own system-call sandbox", "--no-sandbox": "turns off file's own system-call sandbox",
    },
    values=_set("-m", "--magic-file", "-e", "--exclude", "--exclude-quiet", "-F", "--separator", "-P", "--parameter"),
    literal=_set("-e", "--exclude", "--exclude-quiet", "-F", "--separator", "-P", "--parameter"),
    path_lists=_set("-m", "--magic-file"),
)

_STAT = Spec(values=_set("-c", "--format", "--printf", "--cached"), literal=_set("-c", "--format", "--printf"))

_LS = Spec(
    refuse={"-L": _FOLLOWS, "--dereference": _FOLLOWS},
    values=_set("--block-size", "--format", "--hide", "-I", "--ignore", "--indicator-style", "--quoting-style", "--sort",
                "--time", "--time-style", "-T", "--tabsize", "-w", "--width"),
    literal=_set("--hide", "-I", "--ignore", "--time-style"),
)

_DU = Spec(
    refuse={"-L": _FOLLOWS, "--dereference": _FOLLOWS, "--files0-from": _LIST_FILE},
    values=_set("-B", "--block-size", "-d", "--max-depth", "-t", "--threshold", "--time-style", "-X", "--exclude-from",
                "--exclude", "--files0-from"),
    literal=_set("--exclude", "--time-style"),
)

_WC = Spec(refuse={"--files0-from": _LIST_FILE}, values=_set("--files0-from"))

SPECS: dict[str, Spec] = {
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "sed": _SED,
    "awk": _AWK, "gawk": _AWK, "mawk": _AWK, "nawk": _AWK,
    "rg": _RG,
    "find": _FIND,
    "sort": _SORT,
    "uniq": _UNIQ,
    "cut": _CUT,
    "tr": _TR,
    "diff": _DIFF,
    "file": _FILE,
    "stat": _STAT,
    "ls": _LS,
    "du": _DU,
    "wc": _WC,
}
"""cat, head and tail need no rule of their own: the path checks cover every file they read."""

UNKNOWN = Spec()
