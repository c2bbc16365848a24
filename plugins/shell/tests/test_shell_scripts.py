"""The sed and awk program checks on their own: what they refuse, and what they let through."""

from __future__ import annotations

import pytest

from fsmcp_shell.scripts import awk_problem, sed_problem


@pytest.mark.parametrize(
    "script",
    [
        "p", "1d", "$!N;s/\\n/ /", "/^#/d", "s/a/b/g", "s|/usr|/opt|2", "s/w/e/", "s/x/y/I", "y/abc/xyz/",
        ":a;N;$!ba;s/\\n/,/g", "1,/end/{s/x/y/;p}", "0,/re/s//X/", "2~3p", "/x/,+2d", "/x/I,/y/M!p",
        "a hello; w not a command", "1i\\\n  inserted\\\n  lines", "$a\\", "c\\changed", "=", "l 5;q 3",
        "# a comment with w x\np", "b end; s/a/b/; :end", "t\nT\nn;N;D;G;H;x;z;F;P", "\\,x,d", "v 4.2",
    ],
)
def test_sed_scripts_that_only_transform_text(script):
    assert sed_problem(script) is None


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("w out", "the w command writes a file"),
        ("1,3W out", "the W command writes a file"),
        ("/a/ w out", "the w command writes a file"),
        ("$!{p;w out\n}", "the w command writes a file"),
        ("r /etc/passwd", "the r command reads a file"),
        ("R list", "the R command reads a file"),
        ("e id", "the e command runs a shell command"),
        ("1e", "the e command runs a shell command"),
        ("s/a/b/w out", "the s command's w flag writes a file"),
        ("s/a/b/3pw out", "the s command's w flag writes a file"),
        ("s,a,id,e", "the s command's e flag"),
        ("y/a/b/;e id", "the e command runs a shell command"),
        (":a w x;w y", "the w command writes a file"),
        ("b x}w out", "the w command writes a file"),
        ("s/[/]/x/w out", "could not be checked"),  # a bracket ends the regex early here: refused, not missed
        ("s/a/b", "could not be checked"),
        ("/x/", "ends after an address"),
        ("k", "'k' is not a sed command"),
    ],
)
def test_sed_scripts_that_reach_outside(script, reason):
    problem = sed_problem(script)
    assert problem is not None and reason in problem


@pytest.mark.parametrize(
    "program",
    [
        "{ print }", "/x/ { print $1, $2 }", "NR > 1 { n++ } END { print n / 2 }", "{ print ($1 > $2) }",
        '{ printf "%s\\n", $0 }', "{ a[$1] += $2 } END { for (k in a) print k, a[k] }", "$1 ~ /^\\/usr/",
        "{ if (x > 1) print; else print x }", 'BEGIN { print ENVIRON["HOME"] }', "{ getline; print }",
        "{ x = y / z / 2 }", "# print > file in a comment\n{ print }", '{ print "a|b" }', "/a|b/",
        "{ print $1 || $2 }", "length > 72", 'BEGIN { FS = "/" } { print $2 }', "{ sub(/a/, \"b\"); print }",
    ],
)
def test_awk_programs_that_only_transform_text(program):
    assert awk_problem(program) is None


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ('BEGIN { system("id") }', "system() runs a shell command"),
        ('{ print | "sh" }', "a pipe"),
        ('BEGIN { while (("ls" | getline l) > 0) print l }', "a pipe"),
        ('BEGIN { "date" |& getline d }', "coprocess"),
        ('{ print > "out" }', "print > file writes a file"),
        ('{ print $1, $2 >> "out" }', "print > file writes a file"),
        ('{ printf("%s", $0) > "/dev/stderr" }', "printf > file writes a file"),
        ('BEGIN { getline line < "/etc/passwd"; print line }', "getline < file"),
        ('BEGIN { f = "/etc/passwd"; while ((getline l < f) > 0) print l }', "getline < file"),
        ('BEGIN { ARGV[ARGC++] = "/etc/passwd" }', "ARGV or ARGC"),
        ('@include "lib.awk"', "gawk directives"),
        ('BEGIN { f = "system"; @f("id") }', "gawk directives"),
        ('BEGIN { x = 1 / 2; system("id") }', "system() runs a shell command"),
        ('BEGIN { print "unclosed }', "a string is not closed"),
        ("/unclosed", "a regex is not closed"),
    ],
)
def test_awk_programs_that_reach_outside(program, reason):
    problem = awk_problem(program)
    assert problem is not None and reason in problem
