"""list_directory and directory_tree: formats, options, links and the caps."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.anyio


@pytest.fixture
def layout(root):
    (root / "b.txt").write_text("12345")
    (root / "a.md").write_text("")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print()\n")
    (root / "src" / "pkg" / "mod.py").write_text("")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("")
    (root / "link_to_b").symlink_to("b.txt")
    (root / "link_to_src").symlink_to("src")
    (root / "empty").mkdir()
    return root


# -- list_directory -------------------------------------------------------------------------


async def test_flat_listing_is_sorted_and_tagged(layout, call, texts):
    assert texts(await call("list_directory", {"path": "."})) == [
        "[FILE] a.md\n[FILE] b.txt\n[DIR] empty\n[LINK] link_to_b -> b.txt\n[LINK] link_to_src -> src\n[DIR] node_modules\n[DIR] src"
    ]


async def test_sizes(layout, call, texts):
    text = texts(await call("list_directory", {"path": ".", "sizes": True}))[0]
    assert "[FILE] a.md (0 bytes)\n[FILE] b.txt (5 bytes)\n[DIR] empty\n[LINK] link_to_b -> b.txt\n" in text


async def test_recursive_shows_relative_paths_and_never_enters_links(layout, call, texts):
    text = texts(await call("list_directory", {"path": ".", "recursive": True, "excludeGlobs": ["node_modules"]}))[0]
    assert text.splitlines() == [
        "[FILE] a.md",
        "[FILE] b.txt",
        "[DIR] empty",
        "[LINK] link_to_b -> b.txt",
        "[LINK] link_to_src -> src",
        "[DIR] src",
        "[FILE] src/main.py",
        "[DIR] src/pkg",
        "[FILE] src/pkg/mod.py",
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"excludeGlobs": ["*.py"]}, ["[DIR] src", "[DIR] src/pkg"]),
        ({"excludeGlobs": ["src/pkg"]}, ["[DIR] src", "[FILE] src/main.py"]),
        ({"excludePatterns": ["pkg", "main.py"]}, ["[DIR] src"]),
    ],
)
async def test_exclude_globs(layout, call, texts, args, expected):
    text = texts(await call("list_directory", {"path": ".", "recursive": True, **args}))[0]
    assert [ln for ln in text.splitlines() if "src" in ln and "link" not in ln] == expected


async def test_max_entries_says_how_many_were_left_out(layout, call, texts):
    text = texts(await call("list_directory", {"path": ".", "maxResults": 2}))[0]
    assert text == texts(await call("list_directory", {"path": ".", "maxEntries": 2}))[0]  # the old name, still accepted
    assert text.splitlines()[:2] == ["[FILE] a.md", "[FILE] b.txt"]
    assert text.splitlines()[2] == (
        '[truncated: showed 2 of 7 entries (maxResults 2); 5 left out. To see the rest: list a subdirectory, '
        'add excludeGlobs (e.g. "node_modules") or raise maxResults]'
    )


async def test_the_budget_caps_a_listing(root, call, texts):
    for i in range(300):
        (root / f"{'n' * 40}{i:03d}").touch()
    text = texts(await call("list_directory", {"path": "."}, budget=2000))[0]
    assert len(text) <= 2000
    assert "left out" in text and "output budget 2,000 characters" in text


async def test_empty_and_all_excluded(layout, call, texts):
    assert texts(await call("list_directory", {"path": "empty"})) == ["(empty directory)"]
    assert texts(await call("list_directory", {"dir": "src", "excludeGlobs": ["*"]})) == ["(no entries left: 2 excluded by excludeGlobs)"]


async def test_listing_errors(layout, call, failure):
    assert failure(await call("list_directory", {"path": "b.txt"})) == "NOT_DIRECTORY"
    assert failure(await call("list_directory", {"path": "nope"})) == "NOT_FOUND"
    assert failure(await call("list_directory", {"path": ".", "maxEntries": 0})) == "INVALID_PARAMS"


# -- directory_tree -------------------------------------------------------------------------


async def test_tree_is_compact_json(layout, call, texts):
    (text,) = texts(await call("directory_tree", {"path": "src"}))
    assert text == (
        '{"name":"src","type":"directory","children":[{"name":"main.py","type":"file"},'
        '{"name":"pkg","type":"directory","children":[{"name":"mod.py","type":"file"}]}]}'
    )


async def test_tree_symlinks_are_leaves(layout, call, texts):
    tree = json.loads(texts(await call("directory_tree", {"path": ".", "excludeGlobs": ["node_modules", "src"]}))[0])
    assert tree == {
        "name": "root",
        "type": "directory",
        "children": [
            {"name": "a.md", "type": "file"},
            {"name": "b.txt", "type": "file"},
            {"name": "empty", "type": "directory", "children": []},
            {"name": "link_to_b", "type": "symlink"},
            {"name": "link_to_src", "type": "symlink"},
        ],
    }


@pytest.mark.parametrize(
    ("depth", "expected"),
    [
        (0, {"name": "src", "type": "directory"}),
        (1, {"name": "src", "type": "directory", "children": [{"name": "main.py", "type": "file"}, {"name": "pkg", "type": "directory"}]}),
        (2, {"name": "src", "type": "directory", "children": [{"name": "main.py", "type": "file"}, {"name": "pkg", "type": "directory", "children": [{"name": "mod.py", "type": "file"}]}]}),
    ],
)
async def test_tree_depth_is_find_maxdepth(layout, call, texts, depth, expected):
    assert json.loads(texts(await call("directory_tree", {"path": "src", "depth": depth}))[0]) == expected


async def test_tree_exclude_patterns_alias(layout, call, texts):
    tree = json.loads(texts(await call("directory_tree", {"path": ".", "excludePatterns": ["*"]}))[0])
    assert tree["children"] == []


async def test_tree_over_the_budget_is_valid_json_with_marks(root, call, texts):
    for d in range(5):
        for f in range(60):
            (root / f"d{d}").mkdir(exist_ok=True)
            (root / f"d{d}" / f"file-{f:03d}.txt").touch()
    tree_text, notice = texts(await call("directory_tree", {"path": "."}, budget=2000))
    assert len(tree_text) + len(notice) <= 2000
    tree = json.loads(tree_text)
    assert [d["name"] for d in tree["children"]] == [f"d{d}" for d in range(5)]
    assert "truncated" not in tree  # all five of its children are there
    assert all(d["truncated"] is True for d in tree["children"])
    assert 0 < len(tree["children"][0]["children"]) < 60  # breadth-first: d0's files come next
    assert [len(d["children"]) for d in tree["children"][1:]] == [0, 0, 0, 0]
    assert "of 305 entries" in notice and "directory_tree on one of those directories" in notice


async def test_tree_errors(layout, call, failure):
    assert failure(await call("directory_tree", {"path": "b.txt"})) == "NOT_DIRECTORY"
    assert failure(await call("directory_tree", {"path": "b.txt", "depth": 0})) == "NOT_DIRECTORY"
    assert failure(await call("directory_tree", {"path": "nope"})) == "NOT_FOUND"
    assert failure(await call("directory_tree", {"path": ".", "depth": -1})) == "INVALID_PARAMS"


async def test_names_that_are_not_utf8_are_shown_escaped(root, call, texts):
    (root / "sub").mkdir()
    with open(bytes(root / "sub") + b"/caf\xe9.txt", "wb"):
        pass
    assert texts(await call("list_directory", {"path": "sub"})) == ["[FILE] caf\\xe9.txt"]
    tree = json.loads(texts(await call("directory_tree", {"path": "sub"}))[0])
    assert tree["children"] == [{"name": "caf\\xe9.txt", "type": "file"}]
