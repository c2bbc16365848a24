"""search_files and glob_search through the SDK's client."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

TREE = {
    "README.md": "",
    "src/App.tsx": "",
    "src/app_test.py": "",
    "src/components/Button.tsx": "",
    "src/components/appbar/index.ts": "",
    "lib/util.py": "",
    "lib/deep/er/most.py": "",
    ".github/workflows/ci.yml": "",
}


@pytest.fixture
def tree(root, write):
    write(root, TREE)
    return root


async def test_search_files_matches_names_case_insensitively(tree, call, ok):
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "APP"}))
    assert text.splitlines() == [f"{tree}/src/App.tsx", f"{tree}/src/app_test.py", f"{tree}/src/components/appbar"]


async def test_search_files_reports_matching_directories_once(tree, write, call, ok):
    write(tree, {"src/components/appbar/more.ts": ""})
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "components"}))
    assert text == f"{tree}/src/components"


async def test_search_files_is_literal(tree, call, ok):
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "*.py"}))
    assert text.splitlines() == ["(no matches found)", "[nameContains is literal text; to match a glob such as *.py use glob_search]"]
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": ".PY"}))
    assert len(text.splitlines()) == 3


async def test_search_files_legacy_names_and_canonical_wins(tree, call, ok, failure):
    text = ok(await call("search_files", {"path": str(tree / "lib"), "pattern": "most", "excludePatterns": ["er"]}))
    assert text == "(no matches found)"
    text = ok(await call("search_files", {"path": str(tree / "src"), "directory": str(tree / "lib"), "pattern": "x", "nameContains": "util"}))
    assert text == f"{tree}/lib/util.py"
    code, message = failure(await call("search_files", {"directory": str(tree)}))
    assert code == "INVALID_PARAMS" and "nameContains: required" in message


async def test_search_files_exclude_globs(tree, call, ok):
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "app", "excludeGlobs": ["components", "*.py"]}))
    assert text == f"{tree}/src/App.tsx"
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "app", "excludeGlobs": ["src/components/appbar"]}))
    assert f"{tree}/src/components/appbar" not in text.splitlines()


async def test_search_files_honours_gitignore(tree, write, call, ok):
    write(tree, {".gitignore": "dist/\n", "dist/app.js": "", ".git/app_hook": ""})
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "app"}))
    assert "dist" not in text and ".git/" not in text
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "app", "includeIgnored": True}))
    assert f"{tree}/dist/app.js" in text.splitlines() and f"{tree}/.git/app_hook" in text.splitlines()


async def test_search_files_does_not_enter_links_out(tree, tmp_path, write, call, ok):
    write(tmp_path / "outside", {"app_secret.txt": ""})
    (tree / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    text = ok(await call("search_files", {"directory": str(tree), "nameContains": "secret"}))
    assert text == "(no matches found)"


async def test_search_files_refuses_a_slash(tree, call, failure):
    code, message = failure(await call("search_files", {"directory": str(tree), "nameContains": "src/app"}))
    assert code == "INVALID_PARAMS" and "glob_search" in message


async def test_search_files_outside_the_roots(tree, call, failure):
    assert failure(await call("search_files", {"directory": "/etc", "nameContains": "passwd"}))[0] == "ACCESS_DENIED"


async def test_glob_search_anchoring(tree, call, ok):
    async def found(globs, directory=tree):
        text = ok(await call("glob_search", {"directory": str(directory), "globs": globs}))
        return [line.removeprefix(f"{tree}/") for line in text.splitlines()]

    assert await found(["*.py"]) == ["(no matches found)"]  # the directory's own files only
    assert await found(["**/*.py"]) == ["lib/deep/er/most.py", "lib/util.py", "src/app_test.py"]
    assert await found(["lib/*.py"]) == ["lib/util.py"]
    assert await found(["**/*.tsx"]) == ["src/App.tsx", "src/components/Button.tsx"]
    assert await found(["src/**/*.{ts,tsx}"]) == ["src/App.tsx", "src/components/Button.tsx", "src/components/appbar/index.ts"]
    assert await found(["src/???.tsx", "lib/[u]til.py"]) == ["lib/util.py", "src/App.tsx"]
    assert await found(["*.py"], tree / "lib") == ["lib/util.py"]
    assert await found(["**/*.py"], tree / "lib") == ["lib/deep/er/most.py", "lib/util.py"]
    assert await found([f"{tree}/src/*.tsx"], tree / "lib") == ["src/App.tsx"]
    assert await found(["../src/*.py"], tree / "lib") == ["src/app_test.py"]
    assert await found(["src/components/"]) == ["src/components/Button.tsx", "src/components/appbar/index.ts"]
    assert await found([f"{tree}/lib", "**/components/"]) == [  # a directory named outright, or by name and '/'
        "lib/deep/er/most.py",
        "lib/util.py",
        "src/components/Button.tsx",
        "src/components/appbar/index.ts",
    ]
    assert await found([".github/**"]) == [".github/workflows/ci.yml"]


async def test_glob_search_lists_files_only(tree, call, ok):
    text = ok(await call("glob_search", {"directory": str(tree), "globs": ["src/*"]}))
    assert text.splitlines() == [f"{tree}/src/App.tsx", f"{tree}/src/app_test.py"]


async def test_glob_search_max(tree, call, ok):
    text = ok(await call("glob_search", {"directory": str(tree), "globs": ["**"], "max": 2}))
    assert text.splitlines() == [
        f"{tree}/.github/workflows/ci.yml",
        f"{tree}/README.md",
        "[showing the first 2 of 8 files (maxResults 2); pass maxResults: 0 to list them all, or narrow the globs]",
    ]
    text = ok(await call("glob_search", {"directory": str(tree), "globs": ["**"], "max": 0}))
    assert len(text.splitlines()) == 8


async def test_glob_search_excludes_and_skips(tree, tmp_path, call, ok):
    text = ok(await call("glob_search", {"directory": str(tree), "globs": ["**/*.py", "/etc/*.conf"], "excludeGlobs": ["deep"]}))
    assert text.splitlines() == [
        f"{tree}/lib/util.py",
        f"{tree}/src/app_test.py",
        "[1 path(s) skipped: outside the allowed directories: /etc/*.conf]",
    ]


async def test_glob_search_honours_gitignore(tree, write, call, ok):
    write(tree, {".gitignore": "*.log\n", "lib/.gitignore": "!keep.log\n", "a.log": "", "lib/keep.log": "", "lib/drop.log": ""})
    text = ok(await call("glob_search", {"directory": str(tree), "globs": ["**/*.log"]}))
    assert text == f"{tree}/lib/keep.log"
    text = ok(await call("glob_search", {"directory": str(tree), "globs": ["**/*.log"], "includeIgnored": True}))
    assert len(text.splitlines()) == 3


async def test_a_relative_glob_is_anchored_to_the_directory(tree, write, call, ok):
    # Anchored to the directory: *.txt under sub matches sub/a.txt only; **/*.txt matches at any depth.
    write(tree, {"sub/a.txt": "", "sub/nested/deep.txt": "", "top.txt": ""})
    assert ok(await call("glob_search", {"directory": str(tree / "sub"), "globs": ["*.txt"]})) == f"{tree}/sub/a.txt"
    text = ok(await call("glob_search", {"directory": str(tree / "sub"), "globs": ["**/*.txt"]}))
    assert text.splitlines() == [f"{tree}/sub/a.txt", f"{tree}/sub/nested/deep.txt"]
    assert ok(await call("glob_search", {"directory": str(tree), "globs": ["a.txt"]})) == "(no matches found)"


async def test_glob_search_does_not_enter_links_out(tree, tmp_path, write, call, ok):
    write(tmp_path / "outside", {"secret.py": ""})
    (tree / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert ok(await call("glob_search", {"directory": str(tree), "globs": ["**/*.py", "out/*"]})).count("secret") == 0


async def test_glob_search_single_glob_string_and_requirements(tree, call, ok, failure):
    assert ok(await call("glob_search", {"directory": str(tree), "globs": "*.md"})) == f"{tree}/README.md"
    assert failure(await call("glob_search", {"directory": str(tree), "globs": []}))[0] == "INVALID_PARAMS"
    # directory is optional in every search tool: without it, the workspace
    assert ok(await call("glob_search", {"globs": ["*.md"]})) == f"{tree}/README.md"


async def test_lists_stay_within_the_budget(root, write, call, ok):
    write(root, {f"dir{n // 100}/file_{n:04}.txt": "" for n in range(400)})
    text = ok(await call("glob_search", {"directory": str(root), "globs": ["**"], "max": 0}, budget=2000))
    assert len(text) <= 2000 and "[truncated: showed" in text and "excludeGlobs" in text
    text = ok(await call("search_files", {"directory": str(root), "nameContains": "file"}, budget=2000))
    assert len(text) <= 2000 and "[truncated: showed" in text


async def test_the_directory_defaults_to_the_workspace_and_the_cap_is_max_results(tree, call, ok):
    assert ok(await call("search_files", {"nameContains": "util"})) == f"{tree}/lib/util.py"
    lines = ok(await call("glob_search", {"globs": ["**/*.py"], "maxResults": 1})).splitlines()
    assert lines == [f"{tree}/lib/deep/er/most.py", "[showing the first 1 of 3 files (maxResults 1); pass maxResults: 0 to list them all, or narrow the globs]"]
