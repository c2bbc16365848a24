"""grep_files through the SDK's client: formats, file selection, caps, and what is never read."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_matches_are_grep_lines_with_a_footer(root, write, call, ok):
    write(root, {"a.py": "one\nneedle here\nthree\n", "sub/b.txt": "needle\n", "c.md": "nothing\n"})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root)}))
    assert text.splitlines() == [f"{root}/a.py:2:needle here", f"{root}/sub/b.txt:1:needle", "[2 matches]"]


async def test_no_match_says_so(root, write, call, ok):
    write(root, {"a.py": "one\n"})
    assert ok(await call("grep_files", {"regex": "absent", "directory": str(root)})) == "(no matches found)"


async def test_context_lines_and_group_separators(root, write, call, ok):
    lines = "\n".join(f"line {n}" + (" hit" if n in (2, 4, 10) else "") for n in range(1, 13)) + "\n"
    write(root, {"a.txt": lines, "b.txt": "x\nhit\n"})
    text = ok(await call("grep_files", {"regex": "hit", "directory": str(root), "contextLines": 1}))
    a, b = f"{root}/a.txt", f"{root}/b.txt"
    assert text.splitlines() == [
        f"{a}-1-line 1",
        f"{a}:2:line 2 hit",
        f"{a}-3-line 3",  # 2 and 4 overlap: one group
        f"{a}:4:line 4 hit",
        f"{a}-5-line 5",
        "--",
        f"{a}-9-line 9",
        f"{a}:10:line 10 hit",
        f"{a}-11-line 11",
        "--",
        f"{b}-1-x",
        f"{b}:2:hit",
        "[4 matches]",
    ]


async def test_context_is_capped_at_50(root, call, failure):
    code, message = failure(await call("grep_files", {"regex": "x", "directory": str(root), "contextLines": 51}))
    assert code == "INVALID_PARAMS" and "contextLines" in message


async def test_neither_directory_nor_globs_searches_the_workspace_as_the_other_search_tools_do(root, write, call, ok):
    write(root, {"a.txt": "x marks\n"})
    assert ok(await call("grep_files", {"regex": "x"})).splitlines() == [f"{root}/a.txt:1:x marks", "[1 matches]"]


async def test_max_results_truncation_notice(root, write, call, ok):
    write(root, {f"f{n}.txt": "hit\nhit\nhit\n" for n in range(5)})
    text = ok(await call("grep_files", {"regex": "hit", "directory": str(root), "maxResults": 7}))
    lines = text.splitlines()
    assert lines[0].startswith("[results truncated: more lines match than maxResults (7)")
    assert "raise maxResults" in lines[0]
    assert sum(":hit" in line for line in lines) == 7
    assert lines[-1] == "[7 matches]"


async def test_max_results_exactly_reached_is_not_truncated(root, write, call, ok):
    write(root, {"a.txt": "hit\nhit\nhit\n"})
    text = ok(await call("grep_files", {"regex": "hit", "directory": str(root), "maxResults": 3}))
    assert "truncated" not in text and text.endswith("[3 matches]")


async def test_max_results_keeps_the_context_after_the_last_match(root, write, call, ok):
    write(root, {"a.txt": "hit\nafter\nhit\nlast\n"})
    text = ok(await call("grep_files", {"regex": "hit", "directory": str(root), "maxResults": 1, "contextLines": 1}))
    assert text.splitlines()[1:] == [f"{root}/a.txt:1:hit", f"{root}/a.txt-2-after", "[1 matches]"]


async def test_max_results_limit(root, call, failure):
    code, _ = failure(await call("grep_files", {"regex": "x", "directory": str(root), "maxResults": 10001}))
    assert code == "INVALID_PARAMS"


async def test_binary_files_are_skipped(root, write, call, ok):
    write(
        root,
        {
            "bin.dat": b"needle\n\x00\x01\x02 needle\n",
            "late.dat": b"needle\n" + b"x" * 5000 + b"\x00",
            # ripgrep reports these matches before it meets the NUL; the file is still dropped.
            "very_late.dat": b"needle\n" + b"filler line\n" * 50_000 + b"\x00",
            "text.txt": "needle\n",
        },
    )
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root)}))
    assert text.splitlines() == [f"{root}/text.txt:1:needle", "[1 matches]"]


async def test_gitignore_is_honoured_nested_and_negated(root, write, call, ok):
    write(
        root,
        {
            ".gitignore": "build/\n*.log\n!keep.log\n",
            "build/out.txt": "needle\n",
            "debug.log": "needle\n",
            "keep.log": "needle\n",
            "src/.gitignore": "gen_*\n",
            "src/gen_x.py": "needle\n",
            "src/main.py": "needle\n",
            ".git/config": "needle\n",
            ".github/ci.yml": "needle\n",
        },
    )
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root)}))
    found = {line.split(":")[0] for line in text.splitlines()[:-1]}
    assert found == {f"{root}/keep.log", f"{root}/src/main.py", f"{root}/.github/ci.yml"}

    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "includeIgnored": True}))
    found = {line.split(":")[0].removeprefix(f"{root}/") for line in text.splitlines()[:-1]}
    assert found == {"build/out.txt", "debug.log", "keep.log", "src/gen_x.py", "src/main.py", ".git/config", ".github/ci.yml"}


async def test_gitignore_above_the_searched_directory_still_counts(root, write, call, ok):
    write(root, {".gitignore": "*.gen\nsrc/vendor/\n", "src/a.gen": "needle\n", "src/vendor/v.py": "needle\n", "src/a.py": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root / "src")}))
    assert text.splitlines() == [f"{root}/src/a.py:1:needle", "[1 matches]"]


async def test_parent_gitignore_under_a_directory_named_like_a_glob(tmp_path, write, call, ok):
    odd = tmp_path / "we[ir]d {a,b} *dir?"
    write(odd, {".gitignore": "*.gen\n", "src/x.gen": "needle\n", "src/x.py": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(odd / "src")}, roots=[odd]))
    assert text.splitlines() == [f"{odd}/src/x.py:1:needle", "[1 matches]"]


async def test_ignore_files_above_the_roots_are_not_read(root, tmp_path, write, call, ok):
    write(tmp_path, {".gitignore": "*.txt\n"})
    write(root, {"a.txt": "needle\n"})
    assert ok(await call("grep_files", {"regex": "needle", "directory": str(root)})).endswith("[1 matches]")


async def test_relative_globs_are_anchored_to_the_directory(root, write, call, ok):
    write(root, {"app/src/a.py": "needle\n", "app/src/deep/b.py": "needle\n", "app/lib/src/c.py": "needle\n", "app/d.txt": "needle\n"})
    app = root / "app"
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(app), "globs": ["src/*.py"]}))
    assert text.splitlines() == [f"{app}/src/a.py:1:needle", "[1 matches]"]
    # Relative globs are anchored to the directory: *.py is the directory's own, **/*.py any depth.
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(app), "globs": ["*.txt"]}))
    assert text.splitlines() == [f"{app}/d.txt:1:needle", "[1 matches]"]
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(app / "src"), "globs": ["*.py"]}))
    assert text.splitlines() == [f"{app}/src/a.py:1:needle", "[1 matches]"]
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(app), "globs": ["**/*.py"]}))
    assert len(text.splitlines()) == 4
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(app), "globs": ["src/**/*.py", "*.txt"]}))
    assert [line.split(":")[0] for line in text.splitlines()[:-1]] == [f"{app}/d.txt", f"{app}/src/a.py", f"{app}/src/deep/b.py"]


async def test_relative_globs_without_directory_use_the_workspace(root, tmp_path, monkeypatch, write, call, ok):
    write(root, {"src/a.py": "needle\n"})
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the process directory must play no part
    write(elsewhere, {"src/a.py": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "globs": ["src/*.py"]}))
    assert text.splitlines() == [f"{root}/src/a.py:1:needle", "[1 matches]"]


async def test_absolute_globs_are_used_as_given(root, write, call, ok):
    write(root, {"app/x.py": "needle\n", "other/y.py": "needle\n", "other/z.txt": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root / "app"), "globs": [f"{root}/other/*.py"]}))
    assert text.splitlines() == [f"{root}/other/y.py:1:needle", "[1 matches]"]


async def test_a_glob_without_wildcards_names_a_file_or_a_directory(root, write, call, ok):
    write(root, {".gitignore": "*.log\nvendor/\n", "app.log": "needle\n", "src/a.py": "needle\n", "src/b.txt": "needle\n"})
    # A file named outright is searched even though .gitignore covers it, and only once.
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "globs": ["app.log", f"{root}/app.log", "**/*.log", "src/"]}))
    assert text.splitlines() == [f"{root}/app.log:1:needle", f"{root}/src/a.py:1:needle", f"{root}/src/b.txt:1:needle", "[3 matches]"]


async def test_globs_outside_the_roots_are_skipped_with_a_note(root, tmp_path, write, call, ok):
    outside = tmp_path / "outside"
    write(outside, {"secret.py": "needle\n"})
    write(root, {"a.py": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "globs": [f"{outside}/*.py", "*.py", "../outside/*.py"]}))
    assert text.splitlines() == [
        f"{root}/a.py:1:needle",
        "[1 matches]",
        f"[2 path(s) skipped: outside the allowed directories: {outside}/*.py, ../outside/*.py]",
    ]
    text = ok(await call("grep_files", {"regex": "needle", "globs": [f"{outside}/**"]}))
    assert text.splitlines() == ["(no matches found)", f"[1 path(s) skipped: outside the allowed directories: {outside}/**]"]


async def test_a_glob_above_the_roots_searches_only_inside_them(root, tmp_path, write, call, ok):
    write(tmp_path, {"beside.py": "needle\n"})
    write(root, {"in.py": "needle\n"})
    for glob in (f"{tmp_path}/**/*.py", str(tmp_path)):
        text = ok(await call("grep_files", {"regex": "needle", "globs": [glob]}))
        assert text.splitlines() == [f"{root}/in.py:1:needle", "[1 matches]"]


async def test_symlinks_out_of_the_roots_are_never_followed(root, tmp_path, write, call, ok):
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": "needle\n"})
    write(root, {"real.txt": "needle\n"})
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "link.txt").symlink_to(outside / "secret.txt")
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root)}))
    assert text.splitlines() == [f"{root}/real.txt:1:needle", "[1 matches]"]
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "globs": ["linkdir/**"]}))
    assert "secret" not in text


async def test_directory_through_a_link_out_is_refused(root, tmp_path, write, call, failure):
    write(tmp_path / "outside", {"secret.txt": "needle\n"})
    (root / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    code, _ = failure(await call("grep_files", {"regex": "needle", "directory": str(root / "out")}))
    assert code == "ACCESS_DENIED"


async def test_directory_errors(root, write, call, failure):
    write(root, {"a.txt": "x\n"})
    assert failure(await call("grep_files", {"regex": "x", "directory": "/"}))[0] == "ACCESS_DENIED"
    assert failure(await call("grep_files", {"regex": "x", "directory": str(root / "missing")}))[0] == "NOT_FOUND"
    assert failure(await call("grep_files", {"regex": "x", "directory": str(root / "a.txt")}))[0] == "NOT_DIRECTORY"


async def test_invalid_regex_is_invalid_params(root, write, call, failure):
    write(root, {"a.txt": "x\n"})
    code, message = failure(await call("grep_files", {"regex": "foo(", "directory": str(root)}))
    assert code == "INVALID_PARAMS" and "'foo('" in message and "unclosed group" in message


@pytest.mark.parametrize(
    ("regex", "named"),
    [("foo(?=bar)", "lookahead"), ("(?<!a)b", "lookbehind"), (r"(a)\1", "backreference"), (r"(?<q>a)\k<q>", "backreference"), (r"\Afoo", r"\A")],
)
async def test_what_ripgrep_cannot_do_is_refused_by_name(root, call, failure, regex, named):
    code, message = failure(await call("grep_files", {"regex": regex, "directory": str(root)}))
    assert code == "INVALID_PARAMS" and named in message


async def test_ecmascript_meanings_are_kept(root, write, call, ok):
    write(root, {"a.txt": "café\nx<y\n[tag]\na{b\nabc123\n٣\n"})

    async def lines(regex: str) -> list[int]:
        text = ok(await call("grep_files", {"regex": regex, "directory": str(root)}))
        return [int(line.split(":")[1]) for line in text.splitlines()[:-1]]

    assert await lines(r"\bcaf\b") == [1]  # JavaScript's \b is ASCII: é is not a word character
    assert await lines(r"\d") == [5]  # ASCII digits only, not ٣
    assert await lines(r"x\<y") == [2]  # \< is the character <
    assert await lines(r"[[]tag\]") == [3]
    assert await lines(r"a{b") == [4]  # a brace that is no quantifier is literal
    assert await lines(r"^\w+\d{3}$") == [5]
    assert await lines(r"(?<word>[a-c]+)123") == [5]


async def test_case_insensitive(root, write, call, ok):
    write(root, {"a.txt": "NEEDLE\nneedle\n"})
    assert ok(await call("grep_files", {"regex": "needle", "directory": str(root)})).endswith("[1 matches]")
    assert ok(await call("grep_files", {"regex": "needle", "directory": str(root), "caseInsensitive": True})).endswith("[2 matches]")


async def test_crlf_lines_match_at_the_end_and_print_clean(root, write, call, ok):
    write(root, {"a.txt": b"first end\r\nsecond\r\n"})
    text = ok(await call("grep_files", {"regex": "end$", "directory": str(root)}))
    assert text.splitlines() == [f"{root}/a.txt:1:first end", "[1 matches]"]


async def test_exclude_globs_by_name_and_by_path(root, write, call, ok):
    write(root, {"node_modules/x/a.js": "needle\n", "src/gen/b.js": "needle\n", "src/c.js": "needle\n", "d.min.js": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "excludeGlobs": ["node_modules", "src/gen", "*.min.js"]}))
    assert text.splitlines() == [f"{root}/src/c.js:1:needle", "[1 matches]"]
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "excludePatterns": [f"{root}/src/**"], "globs": ["**/*.js"]}))
    assert "src/" not in text and "node_modules/x/a.js" in text


async def test_needs_a_string_regex(root, call, failure):
    code, message = failure(await call("grep_files", {"regex": True, "directory": str(root)}))
    assert code == "INVALID_PARAMS" and message.startswith("invalid arguments for grep_files: regex: regex is the pattern itself")


async def test_legacy_path_alias(root, write, call, ok):
    write(root, {"a.txt": "needle\n", "b/c.txt": "needle\n"})
    text = ok(await call("grep_files", {"regex": "needle", "path": str(root / "b")}))
    assert text.splitlines() == [f"{root}/b/c.txt:1:needle", "[1 matches]"]
    text = ok(await call("grep_files", {"regex": "needle", "path": str(root / "b"), "directory": str(root)}))
    assert text.endswith("[2 matches]")  # the canonical name wins


async def test_output_stays_within_the_budget(root, write, call, ok):
    write(root, {f"f{n:03}.txt": "".join(f"needle line {i} {'x' * 60}\n" for i in range(20)) for n in range(50)})
    text = ok(await call("grep_files", {"regex": "needle", "directory": str(root), "maxResults": 1000}, budget=5000))
    assert len(text) <= 5000
    first = text.splitlines()[0]
    assert first.startswith("[output truncated: ") and "of 1,000 matches fit the output budget of 5,000 characters" in first
    shown = sum(":needle" in line for line in text.splitlines())
    assert text.endswith(f"[{shown} matches]") and 0 < shown < 1000


async def test_a_long_line_is_cut_around_its_match(root, write, call, ok):
    write(root, {"min.js": "a" * 5000 + "needle" + "b" * 5000 + "\n"})
    line = ok(await call("grep_files", {"regex": "needle", "directory": str(root)})).splitlines()[0]
    assert "needle" in line and len(line) < 700 and "[line of 10,006 characters cut]" in line


async def test_progress_is_reported_when_asked(root, write, call, ok):
    write(root, {"a.txt": "needle\n"})
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    ok(await call("grep_files", {"regex": "needle", "directory": str(root)}, progress=progress))
    assert len(seen) >= 2
    assert [p[0] for p in seen] == sorted({p[0] for p in seen})  # strictly increasing
    assert seen[-1][0] == seen[-1][1] and "1 matching lines in 1 files" in seen[-1][2]
