"""The ECMAScript translation, where JavaScript and Python's ``re`` disagree, and templates."""

import re

import pytest

from fsmcp import ToolError
from fsmcp_edit.jsregex import compile_js
from fsmcp_edit.template import parse_template


def matches(pattern, text, **flags):
    return [m.group(0) for m in compile_js(pattern, **flags).compiled.finditer(text)]


@pytest.mark.parametrize(
    ("pattern", "text", "js", "python_re"),
    [
        # \d and \w are ASCII in JavaScript; re takes any Unicode digit or letter.
        (r"\d+", "12 \u0663\u0664", ["12"], ["12", "\u0663\u0664"]),
        (r"\w+", "héllo", ["h", "llo"], ["héllo"]),
        # \b follows the ASCII \w.
        (r"\bllo", "héllo", ["llo"], []),
        # $ ends a line before any line terminator, \r included; re's $ knows only \n.
        (r"b$", "ab\r\n", ["b"], []),
        # JavaScript's ^ and $ are per line here (the m flag is always on).
        (r"^\w", "a\nb", ["a", "b"], ["a"]),
        # . stops at \r as well as \n in JavaScript.
        (r"a.b", "a\rb a-b", ["a-b"], ["a\rb", "a-b"]),
        # {,3} is a literal in JavaScript, a quantifier in re.
        (r"a{,3}", "aaa a{,3}", ["a{,3}"], ["aaa", "", "a", "", "", "", "", ""]),
        # [^] is any character in JavaScript, an error in re.
        (r"x[^]y", "x\ny", ["x\ny"], None),
        # An escaped letter without meaning is the letter itself in JavaScript; \a is BEL in re.
        (r"\a\/", "a/", ["a/"], []),
        # A group that did not take part matches empty in JavaScript; re fails the backreference.
        (r"(a)?b\1", "b", ["b"], []),
        # \s includes U+FEFF in JavaScript, not in re.
        (r"\s", "\ufeff", ["\ufeff"], []),
        # \W inside a class means "not ASCII word", so é belongs to it.
        (r"[\W]", "é", ["é"], []),
        # \u{…} and UTF-16 surrogate pairs name one code point.
        (r"\u{1F600}\ud83d\ude00", "😀😀", ["😀😀"], None),
        # Named groups use (?<name>…) and \k<name>.
        (r"(?<q>['\x22]).*?\k<q>", "say 'hi' now", ["'hi'"], None),
    ],
)
def test_javascript_semantics_where_re_differs(pattern, text, js, python_re):
    assert matches(pattern, text) == js
    if python_re is None:
        with pytest.raises(re.error):
            re.compile(pattern)
    else:
        assert [m.group(0) for m in re.finditer(pattern, text)] == python_re


def test_dot_all_flag_lets_dot_cross_lines():
    assert matches(r"a.b", "a\nb", dot_all=True) == ["a\nb"]


def test_ignore_case_is_unicode_but_word_stays_ascii():
    assert matches("É", "é", ignore_case=True) == ["é"]
    assert matches(r"\w", "\u017f", ignore_case=True) == []  # re would take LATIN SMALL LONG S for s


@pytest.mark.parametrize(
    "pattern",
    ["(?i)a", "(?P<n>a)", "a**", "a*+", "a{2,1}", "(a", "a)", "[b-a]", r"\2(a)", r"\p{L}", "[abc", "*a", r"\c1"],
)
def test_what_javascript_or_re_cannot_run_is_invalid(pattern):
    with pytest.raises(ToolError) as info:
        compile_js(pattern)
    assert info.value.code.value == "INVALID_PARAMS"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("$1-$2", "a-b"),
        (r"\2\1", "ba"),
        ("$&|$0|\\0", "a=b|a=b|a=b"),
        ("$$1", "$1"),
        ("$<k>:$<v>", "a:b"),
        ("[$`|$']", "[<|>]"),
        ("$12", "a2"),
        (r"\\1", "\\1"),
        ("a\\nb", "a\\nb"),
        ("$x $", "$x $"),
    ],
)
def test_replacement_templates(template, expected):
    regex = compile_js(r"(?<k>\w)=(?<v>\w)")
    match = regex.compiled.search("<a=b>")
    assert parse_template(template, regex).expand(match) == expected


@pytest.mark.parametrize("template", ["$3", r"\3", "$<nope>"])
def test_template_reference_to_a_missing_group_is_an_error(template):
    with pytest.raises(ToolError) as info:
        parse_template(template, compile_js(r"(\w)=(\w)"))
    assert info.value.code.value == "INVALID_PARAMS"


def test_group_that_did_not_take_part_expands_to_nothing():
    regex = compile_js(r"(x)?y")
    assert parse_template("[$1]", regex).expand(regex.compiled.search("y")) == "[]"
