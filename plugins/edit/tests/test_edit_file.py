"""edit_file through the real MCP client: every matching rule, error and output form."""

import pytest

from fsmcp.testing import text_of

pytestmark = pytest.mark.anyio


def put(root, name, data):
    path = root / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


async def edit(call, path, *edits, host=None, **options):
    return await call("edit_file", {"path": str(path), "edits": list(edits), **options}, **(host or {}))


# -- literal mode ---------------------------------------------------------------------------


async def test_unique_literal_is_replaced_with_summary_and_diff(root, call):
    path = put(root, "a.py", "def f():\n    return 1\n")
    result = await edit(call, path, {"oldText": "return 1", "newText": "return 2"})
    assert not result.is_error
    assert path.read_text() == "def f():\n    return 2\n"
    assert text_of(result) == (
        f"Edited {path}: 1 edit, 1 replacement, +1 -1 lines.\n"
        f"--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"
    )


async def test_duplicate_old_text_is_not_unique_naming_both_lines(root, call):
    original = "x = 1\ny = 2\nx = 1\n"
    path = put(root, "dup.py", original)
    result = await edit(call, path, {"oldText": "x = 1", "newText": "x = 9"})
    assert result.is_error
    text = text_of(result)
    assert text.startswith(f"NOT_UNIQUE: {path} was not changed: oldText occurs 2 times, at lines 1 and 3.")
    assert "nearLine" in text and "limit: 0" in text
    assert path.read_text() == original


async def test_overlapping_occurrences_count_as_ambiguous(root, call):
    path = put(root, "o.txt", "aaa\n")
    result = await edit(call, path, {"oldText": "aa", "newText": "b"})
    assert result.is_error and text_of(result).startswith("NOT_UNIQUE")
    assert path.read_text() == "aaa\n"


async def test_near_line_picks_the_nearest_occurrence(root, call):
    path = put(root, "n.py", "x = 1\n\n\n\n\nx = 1\n\nx = 1\n")
    result = await edit(call, path, {"oldText": "x = 1", "newText": "x = 2", "nearLine": 5})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "x = 1\n\n\n\n\nx = 2\n\nx = 1\n"


async def test_near_line_tie_is_not_unique(root, call):
    path = put(root, "t.py", "x\n-\nx\n")
    result = await edit(call, path, {"oldText": "x", "newText": "y", "nearLine": 2})
    assert result.is_error
    assert "equally near line 2, at lines 1 and 3" in text_of(result)
    assert path.read_text() == "x\n-\nx\n"


async def test_limit_zero_replaces_all_and_limit_n_the_first_n(root, call):
    path = put(root, "l.txt", "a a a a\n")
    assert not (await edit(call, path, {"oldText": "a", "newText": "b", "limit": 2})).is_error
    assert path.read_text() == "b b a a\n"
    result = await edit(call, path, {"oldText": "a", "newText": "c", "limit": 0})
    assert "1 edit, 2 replacements" in text_of(result)
    assert path.read_text() == "b b c c\n"


async def test_case_insensitive_literal(root, call):
    path = put(root, "c.txt", "Hello World\n")
    assert not (await edit(call, path, {"oldText": "hello", "newText": "Bye", "caseInsensitive": True})).is_error
    assert path.read_text() == "Bye World\n"


async def test_literal_new_text_is_never_a_template(root, call):
    path = put(root, "s.sh", "echo PID\n")
    assert not (await edit(call, path, {"oldText": "PID", "newText": "$$ $1 \\1 $&"})).is_error
    assert path.read_text() == "echo $$ $1 \\1 $&\n"


async def test_expected_occurrences_mismatch_is_edit_conflict(root, call):
    path = put(root, "e.txt", "foo bar foo\n")
    result = await edit(call, path, {"oldText": "foo", "newText": "baz", "expectedOccurrences": 3})
    assert result.is_error
    assert text_of(result).startswith(f"EDIT_CONFLICT: {path} was not changed: expectedOccurrences is 3, but oldText occurs 2 times, at line")
    assert path.read_text() == "foo bar foo\n"


async def test_expected_occurrences_that_hold_replace_them_all(root, call):
    path = put(root, "e.txt", "foo bar foo\n")
    assert not (await edit(call, path, {"oldText": "foo", "newText": "baz", "expectedOccurrences": 2})).is_error
    assert path.read_text() == "baz bar baz\n"


async def test_start_and_end_line_scope_the_search(root, call):
    path = put(root, "s.txt", "x\nx\nx\nx\n")
    assert not (await edit(call, path, {"oldText": "x", "newText": "y", "startLine": 3, "endLine": 3})).is_error
    assert path.read_text() == "x\nx\ny\nx\n"
    result = await edit(call, path, {"oldText": "y", "newText": "z", "startLine": 1, "endLine": 2})
    assert result.is_error
    assert "oldText was not found in lines 1-2 (it occurs outside that range, at line 3)" in text_of(result)


async def test_start_line_alone_replaces_the_first_occurrence_at_or_after_it(root, call):
    # startLine alone is where the search starts. Several occurrences are no ambiguity then.
    path = put(root, "s.txt", "x = 1\nx = 1\nx = 1\nx = 1\n")
    result = await edit(call, path, {"oldText": "x = 1", "newText": "x = 2", "startLine": 2})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "x = 1\nx = 2\nx = 1\nx = 1\n"
    result = await edit(call, path, {"oldText": "x = 1", "newText": "x = 3", "startLine": 2})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "x = 1\nx = 2\nx = 3\nx = 1\n"
    # With endLine too, the range must hold one occurrence, as before.
    result = await edit(call, path, {"oldText": "x = 1", "newText": "x = 4", "startLine": 1, "endLine": 4})
    assert result.is_error and text_of(result).startswith("NOT_UNIQUE: ")


async def test_negative_start_line_counts_from_the_end(root, call):
    path = put(root, "s.txt", "x\nx\nx\n")
    assert not (await edit(call, path, {"oldText": "x", "newText": "y", "startLine": -1})).is_error
    assert path.read_text() == "x\nx\ny\n"


# -- whitespace-tolerant fallback ------------------------------------------------------------


async def test_a_line_copied_without_its_indentation_re_indents_the_new_lines(root, call):
    # oldText written at column 0 matches a line indented 8 deeper: newText moves by the same 8.
    path = put(root, "a.py", "class A:\n    def f(self):\n        return 1\n")
    result = await edit(call, path, {"oldText": "return 1", "newText": "x = 1\nif x:\n    return x\nreturn 0"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "class A:\n    def f(self):\n        x = 1\n        if x:\n            return x\n        return 0\n"


async def test_new_lines_already_at_the_files_indentation_are_not_shifted_twice(root, call):
    path = put(root, "a.py", "class A:\n    def f(self):\n        return 1\n")
    result = await edit(call, path, {"oldText": "return 1", "newText": "x = 1\n        return x"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "class A:\n    def f(self):\n        x = 1\n        return x\n"


async def test_a_block_copied_shallower_or_deeper_re_indents_the_new_text_by_the_difference(root, call):
    original = "def f():\n    if x:\n        a()\n        b()\n"
    path = put(root, "a.py", original)
    result = await edit(call, path, {"oldText": "a()\nb()", "newText": "a()\nif y:\n    c()\nb()"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "def f():\n    if x:\n        a()\n        if y:\n            c()\n        b()\n"
    path.write_text(original)
    result = await edit(call, path, {"oldText": "            a()\n            b()", "newText": "            a()\n                d()"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "def f():\n    if x:\n        a()\n            d()\n"


async def test_new_text_written_without_the_blocks_indentation_goes_to_the_blocks_indentation(root, call):
    # oldText copied 4 deeper than the file, newText with no indentation at all: shifting newText
    # by -4 would put its lines left of column 0, so newText was written without the block's
    # indentation: its first line goes where the block starts, the rest keep their steps under it.
    original = "class A:\n    def f(self):\n        if x:\n            b = 2\n        return b\n"
    path = put(root, "a.py", original)
    old = "            if x:\n                b = 2"
    result = await edit(call, path, {"oldText": old, "newText": "if x:\n    a = 1\n    b = 2"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "class A:\n    def f(self):\n        if x:\n            a = 1\n            b = 2\n        return b\n"
    # A tab-indented file and oldText in 4-space steps, two steps deeper: steps in the file's tabs.
    path.write_text("def f():\n\tif x:\n\t\tb = 2\n")
    result = await edit(call, path, {"oldText": "            if x:\n                b = 2", "newText": "if x:\n    a = 1"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "def f():\n\tif x:\n\t\ta = 1\n"


async def test_block_copied_from_a_differently_indented_place_keeps_the_files_indentation(root, call):
    original = (
        "class A:\n"
        "\tdef run(self):\n"
        "\t\tif ready:\n"
        "\t\t\tstart()  \n"
        "\t\t\twait()\n"
        "\t\treturn\n"
    )
    path = put(root, "a.py", original)
    # Copied from a 4-space context, one level less deep, without the trailing spaces.
    old = "    if ready:\n        start()\n        wait()"
    new = "    if ready:\n        start()\n        wait(5)\n            log()\n    finish()\nreturn"
    result = await edit(call, path, {"oldText": old, "newText": new})
    assert not result.is_error, text_of(result)
    assert path.read_text() == (
        "class A:\n"
        "\tdef run(self):\n"
        "\t\tif ready:\n"
        "\t\t\tstart()  \n"  # matched and unchanged: its own bytes, trailing spaces and all
        "\t\t\twait(5)\n"
        "\t\t\t\tlog()\n"  # one step deeper, in the file's steps (a tab, not 4 spaces)
        "\t\tfinish()\n"
        "\treturn\n"  # one step less deep than the block
        "\t\treturn\n"
    )


async def test_tolerant_match_in_two_places_is_not_unique(root, call):
    original = "if a:\n    go()\nelse:\n  if a:\n      go()\n"
    path = put(root, "w.py", original)
    result = await edit(call, path, {"oldText": "if a:\n  go()", "newText": "pass"})
    assert result.is_error
    assert "oldText, ignoring indentation, occurs 2 times, at lines 1 and 4" in text_of(result)
    assert path.read_text() == original


async def test_not_found_shows_the_closest_region_and_first_differing_line(root, call):
    original = "def add(a, b):\n    total = a + b\n    return total\n\nprint(add(1, 2))\n"
    path = put(root, "m.py", original)
    result = await edit(call, path, {"oldText": "def add(a, b):\n    total = a - b\n    return total", "newText": "x"})
    assert result.is_error
    assert text_of(result) == (
        f"PATTERN_NOT_FOUND: {path} was not changed: oldText was not found (neither exactly nor ignoring indentation). "
        "Copy the text exactly as the file has it (read_file shows it), then retry. The closest text is at lines 1-3:\n"
        "1: def add(a, b):\n2:     total = a + b\n3:     return total\n"
        "First difference, line 2:\n  expected:     total = a - b\n  found:        total = a + b"
    )
    assert path.read_text() == original


async def test_no_fallback_when_limit_is_not_one(root, call):
    path = put(root, "f.py", "    x = 1\n")
    result = await edit(call, path, {"oldText": "x = 1\n  ", "newText": "y", "limit": 0})
    assert result.is_error and text_of(result).startswith("PATTERN_NOT_FOUND")


# -- regex mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "replacement", "expected"),
    [
        (r"(\w+)@(\w+)", "$2 at $1", "b at a\n"),
        (r"(\w+)@(\w+)", r"\2 at \1", "b at a\n"),
        (r"\w+@\w+", "<$&>", "<a@b>\n"),
        (r"\w+@\w+", r"[$0|\0]", "[a@b|a@b]\n"),
        (r"(?<user>\w+)@\w+", "$<user>!", "a!\n"),
        (r"@", "$$", "a$b\n"),
        (r"@", "$5x", None),
        (r"\w+", r"\1", None),
    ],
)
async def test_regex_replacement_references(root, call, pattern, replacement, expected):
    path = put(root, "r.txt", "a@b\n")
    result = await edit(call, path, {"oldText": pattern, "newText": replacement, "isRegex": True})
    if expected is None:
        assert result.is_error
        assert text_of(result).startswith(f"INVALID_PARAMS: {path} was not changed: newText uses ")
        assert "capturing group(s)" in text_of(result)
        assert path.read_text() == "a@b\n"
    else:
        assert not result.is_error, text_of(result)
        assert path.read_text() == expected


async def test_regex_anchors_work_per_line_without_a_phantom_last_line(root, call):
    path = put(root, "q.txt", "one\ntwo\n")
    result = await edit(call, path, {"oldText": "^(.*)$", "newText": '"$1"', "isRegex": True, "limit": 0})
    assert not result.is_error, text_of(result)
    assert path.read_text() == '"one"\n"two"\n'


async def test_regex_limit_one_takes_the_first_match_without_the_guard(root, call):
    path = put(root, "q.txt", "one\ntwo\n")
    assert not (await edit(call, path, {"oldText": "^(.*)$", "newText": "[$1]", "isRegex": True})).is_error
    assert path.read_text() == "[one]\ntwo\n"


async def test_regex_dot_does_not_cross_lines_and_digits_are_ascii(root, call):
    path = put(root, "d.txt", "a1\nb\u0663 2\n")
    assert not (await edit(call, path, {"oldText": r"a.*", "newText": "A", "isRegex": True})).is_error
    assert not (await edit(call, path, {"oldText": r"\d", "newText": "#", "isRegex": True, "limit": 0})).is_error
    assert path.read_text() == "A\nb\u0663 #\n"


async def test_invalid_regex_is_invalid_params_and_the_file_is_unchanged(root, call):
    path = put(root, "i.txt", "abc\n")
    for pattern in ["(a", "a**", "(?i)a", "a{2,1}"]:
        result = await edit(call, path, {"oldText": pattern, "newText": "x", "isRegex": True})
        assert result.is_error and text_of(result).startswith(f"INVALID_PARAMS: {path} was not changed: invalid regex"), pattern
    assert path.read_text() == "abc\n"


async def test_a_variable_length_lookbehind_works_as_in_javascript(root, call):
    path = put(root, "i.txt", "aab b\n")
    result = await edit(call, path, {"oldText": "(?<=a+)b", "newText": "x", "isRegex": True})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "aax b\n"


async def test_regex_that_matches_nothing_is_pattern_not_found(root, call):
    path = put(root, "i.txt", "abc\n")
    result = await edit(call, path, {"oldText": r"\d+", "newText": "x", "isRegex": True})
    assert result.is_error
    assert text_of(result).startswith(f"PATTERN_NOT_FOUND: {path} was not changed: the regex '\\\\d+' matched nothing")


# -- line edits ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit_item", "expected"),
    [
        ({"lineNumber": 2, "action": "insert", "content": "new"}, "1\nnew\n2\n3\n"),
        ({"lineNumber": 0, "action": "insert", "content": "end\n"}, "1\n2\n3\nend\n"),
        ({"lineNumber": -1, "action": "insert", "content": "x\ny"}, "1\n2\nx\ny\n3\n"),
        ({"lineNumber": -1, "action": "replace", "content": "three"}, "1\n2\nthree\n"),
        ({"lineNumber": 1, "endLine": 2, "action": "replace", "content": "one"}, "one\n3\n"),
        ({"lineNumber": -2, "action": "delete"}, "1\n3\n"),
        ({"lineNumber": 2, "endLine": -1, "action": "delete"}, "1\n"),
    ],
)
async def test_line_edits(root, call, edit_item, expected):
    path = put(root, "n.txt", "1\n2\n3\n")
    result = await edit(call, path, {"type": "line", **edit_item})
    assert not result.is_error, text_of(result)
    assert path.read_text() == expected


async def test_line_number_outside_the_file_is_invalid_params(root, call):
    path = put(root, "n.txt", "1\n2\n")
    result = await edit(call, path, {"type": "line", "lineNumber": 5, "action": "delete"})
    assert result.is_error
    assert "lineNumber 5 is not a line of the file, which has 2 lines" in text_of(result)
    result = await edit(call, path, {"type": "line", "lineNumber": -3, "action": "replace", "content": "x"})
    assert result.is_error and text_of(result).startswith("INVALID_PARAMS")
    assert path.read_text() == "1\n2\n"


async def test_line_edit_without_type_is_inferred_from_action(root, call):
    path = put(root, "n.txt", "1\n2\n")
    assert not (await edit(call, path, {"lineNumber": 1, "action": "delete"})).is_error
    assert path.read_text() == "2\n"


async def test_mixing_line_and_replace_fields_is_invalid_params(root, call):
    path = put(root, "n.txt", "1\n")
    result = await edit(call, path, {"oldText": "1", "newText": "2", "lineNumber": 1})
    assert result.is_error and text_of(result).startswith("INVALID_PARAMS")
    assert "lineNumber: only for line edits" in text_of(result)


# -- sequences, dry runs, other forms ---------------------------------------------------------


async def test_edits_apply_in_sequence_and_a_later_failure_writes_nothing(root, call):
    path = put(root, "s.txt", "alpha\nbeta\n")
    result = await edit(call, path, {"oldText": "alpha", "newText": "gamma"}, {"oldText": "gamma\nbeta", "newText": "delta"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "delta\n"
    result = await edit(call, path, {"oldText": "delta", "newText": "x"}, {"oldText": "missing", "newText": "y"})
    assert result.is_error
    assert text_of(result).startswith(f"PATTERN_NOT_FOUND: {path} was not changed: edit 2 of 2: oldText was not found")
    assert path.read_text() == "delta\n"


async def test_dry_run_returns_the_diff_and_writes_nothing(root, call):
    path = put(root, "d.txt", "keep\nold\n")
    result = await edit(call, path, {"oldText": "old", "newText": "new"}, dryRun=True)
    assert not result.is_error
    assert text_of(result) == (
        f"Dry run (nothing written): {path} would get 1 edit, 1 replacement, +1 -1 lines.\n"
        f"--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n keep\n-old\n+new"
    )
    assert path.read_text() == "keep\nold\n"


async def test_dry_run_without_a_difference_says_no_changes(root, call):
    path = put(root, "d.txt", "same\n")
    result = await edit(call, path, {"oldText": "same", "newText": "same"}, dryRun=True)
    assert not result.is_error and text_of(result) == "(no changes)"


async def test_dry_run_gives_the_same_not_found_error_as_a_real_run(root, call):
    path = put(root, "d.txt", "text\n")
    dry = await edit(call, path, {"oldText": "nope", "newText": "x"}, dryRun=True)
    real = await edit(call, path, {"oldText": "nope", "newText": "x"})
    assert dry.is_error and real.is_error and text_of(dry) == text_of(real)


async def test_a_real_run_without_a_difference_writes_nothing(root, call):
    path = put(root, "d.txt", "same\n")
    before = path.stat().st_mtime_ns
    result = await edit(call, path, {"oldText": "same", "newText": "same"})
    assert text_of(result).startswith("(no changes)")
    assert path.stat().st_mtime_ns == before


async def test_regex_and_replace_edits_by_type(root, call):
    path = put(root, "c.js", "x@example.com y@example.com\nconst a = 1;\n")
    result = await edit(
        call,
        path,
        {"type": "regex", "pattern": r"\b(\w+)@example\.com\b", "replacement": "$1@new.org"},
        {"type": "replace", "oldText": "const a", "newText": "let a"},
    )
    assert not result.is_error, text_of(result)
    assert path.read_text() == "x@new.org y@new.org\nlet a = 1;\n"


async def test_one_edit_at_the_top_level_by_find_and_replace(root, call):
    path = put(root, "a.txt", "old\n")
    result = await call("edit_file", {"file": str(path), "find": "old", "replace": "new"})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "new\n"


async def test_unknown_edit_field_is_refused(root, call):
    path = put(root, "a.txt", "old\n")
    result = await edit(call, path, {"oldText": "old", "newText": "new", "oldtext": "x"})
    assert result.is_error and "unknown parameter" in text_of(result)


async def test_an_unknown_field_inside_an_edit_names_the_fields_an_edit_takes(root, call):
    path = put(root, "a.txt", "old\n")
    result = await edit(call, path, {"oldText": "old", "newTxt": "new"})
    assert text_of(result) == (
        "INVALID_PARAMS: invalid arguments for edit_file: edits.0.newTxt: unknown parameter. An item of edits takes: "
        "type, oldText, newText, isRegex, caseInsensitive, limit, expectedOccurrences, startLine, endLine, nearLine, "
        "lineNumber, action, content. Parameters: path, edits, dryRun, expectedVersion"
    )
    assert path.read_text() == "old\n"


async def test_missing_file_is_not_found(root, call):
    result = await edit(call, root / "nope.txt", {"oldText": "a", "newText": "b"})
    assert result.is_error and text_of(result).startswith("NOT_FOUND")


async def test_read_only_root_refuses_edits_but_allows_a_dry_run(root, call):
    path = put(root, "a.txt", "old\n")
    real = await edit(call, path, {"oldText": "old", "newText": "new"}, host={"roots": [f"{root}:ro"]})
    assert real.is_error and text_of(real).startswith("READ_ONLY")
    dry = await edit(call, path, {"oldText": "old", "newText": "new"}, dryRun=True, host={"roots": [f"{root}:ro"]})
    assert not dry.is_error and "+new" in text_of(dry)
    assert path.read_text() == "old\n"


async def test_a_long_diff_is_cut_to_the_budget_and_says_so(root, call):
    path = put(root, "big.txt", "".join(f"line {i}\n" for i in range(2000)))
    result = await edit(call, path, {"oldText": "line", "newText": "LINE", "limit": 0}, host={"budget": 1000})
    text = text_of(result)
    assert len(text) <= 1000
    assert "[truncated: showed" in text and "The edit was applied in full" in text
    assert path.read_text().count("LINE") == 2000


async def test_file_mode_is_kept(root, call):
    path = put(root, "run.sh", "echo a\n")
    path.chmod(0o754)
    assert not (await edit(call, path, {"oldText": "a", "newText": "b"})).is_error
    assert path.stat().st_mode & 0o777 == 0o754


async def test_tool_annotations_say_destructive(root):
    from fsmcp.testing import connect, host_for
    from fsmcp_edit import hooks

    async with connect(host_for([root], [("edit", hooks)])) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("edit_file", "edit_files"):
        hints = tools[name].annotations
        # idempotentHint is left out when false, the spec's default
        assert hints.destructive_hint is True and hints.read_only_hint is False and not hints.idempotent_hint


async def test_edits_sent_as_json_text_are_accepted(root, call):
    path = put(root, "a.txt", "old\n")
    result = await call("edit_file", {"path": str(path), "edits": '[{"oldText": "old", "newText": "new"}]'})
    assert not result.is_error, text_of(result)
    assert path.read_text() == "new\n"


async def test_a_lone_surrogate_in_new_text_is_refused(root, call):
    path = put(root, "a.txt", "a\n")
    result = await edit(call, path, {"oldText": "a", "newText": "\udce9"})
    assert result.is_error and "newText holds a lone UTF-16 surrogate" in text_of(result)
    assert path.read_bytes() == b"a\n"


async def test_a_scope_outside_the_file_is_invalid_params(root, call):
    path = put(root, "a.txt", "a\n")
    result = await edit(call, path, {"oldText": "a", "newText": "b", "startLine": 3})
    assert text_of(result) == (
        f"INVALID_PARAMS: {path} was not changed: startLine 3 is not a range of lines in the file, "
        "which has 1 lines (1..1, or -1..-1 from the end)"
    )
