"""edit_files: paths and globs, per-file results, and all-or-nothing across files."""

import pytest

from fsmcp import ErrorCode, ToolError
from fsmcp.paths.fs import FileSystem
from fsmcp.testing import text_of

pytestmark = pytest.mark.anyio

RENAME = [{"oldText": "old_name", "newText": "new_name"}]


@pytest.fixture
def tree(root):
    files = {
        "src/a.py": "x = old_name\n",
        "src/b.py": "y = old_name\n",
        "src/deep/c.py": "z = old_name\n",
        "src/notes.txt": "old_name\n",
        "src/none.py": "nothing here\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def contents(root):
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_globs_expand_and_each_file_reports_inline(tree, call):
    result = await call("edit_files", {"paths": ["src/**/*.py"], "edits": RENAME})
    assert not result.is_error
    text = text_of(result)
    assert text.startswith("4 files: 3 edited, 0 unchanged, 1 failed.\n")
    assert f"{tree}/src/a.py: OK 1 edit, 1 replacement, +1 -1 lines\n--- {tree}/src/a.py" in text
    assert f"{tree}/src/none.py: [error PATTERN_NOT_FOUND] oldText was not found" in text
    assert contents(tree)["src/deep/c.py"] == "z = new_name\n"
    assert contents(tree)["src/notes.txt"] == "old_name\n"


async def test_a_single_star_stays_in_its_directory(tree, call):
    result = await call("edit_files", {"paths": [f"{tree}/src/*.py"], "edits": RENAME, "dryRun": True})
    text = text_of(result)
    assert "deep/c.py" not in text and "src/a.py: OK" in text


async def test_literal_paths_and_globs_together_each_file_once(tree, call):
    result = await call("edit_files", {"paths": ["src/a.py", "src/{a,b}.py", "src/missing.py"], "edits": RENAME})
    text = text_of(result)
    assert text.startswith("3 files: 2 edited, 0 unchanged, 1 failed.")
    assert "src/missing.py: [error NOT_FOUND]" in text
    assert text.count("src/a.py: OK") == 1


async def test_a_glob_matching_nothing_is_not_found(tree, call):
    result = await call("edit_files", {"paths": ["src/**/*.rs"], "edits": RENAME})
    assert result.is_error and text_of(result).startswith("NOT_FOUND: the glob 'src/**/*.rs' matches no file")


async def test_atomic_failure_writes_nothing_anywhere(tree, call):
    before = contents(tree)
    result = await call("edit_files", {"paths": ["src/**/*.py"], "edits": RENAME, "atomic": True})
    assert result.is_error
    text = text_of(result)
    assert text.startswith("PATTERN_NOT_FOUND: atomic: 1 of 4 files failed, so nothing was written anywhere:")
    assert f"{tree}/src/a.py: OK" in text
    assert contents(tree) == before


async def test_dry_run_previews_every_file(tree, call):
    before = contents(tree)
    result = await call("edit_files", {"paths": ["src/a.py", "src/b.py"], "edits": RENAME, "dryRun": True})
    text = text_of(result)
    assert text.startswith("Dry run (nothing written): 2 files: 2 would change, 0 unchanged, 0 failed.")
    assert text.count("+x = new_name") == 1 and text.count("+y = new_name") == 1
    assert contents(tree) == before


async def test_atomic_write_failing_half_way_restores_the_files_already_written(tree, call, monkeypatch):
    before = contents(tree)
    real_write = FileSystem.write_atomic
    writes = []

    def flaky_write(self, path, data, **options):
        writes.append(str(path))
        if len(writes) == 2:
            raise ToolError(ErrorCode.INTERNAL_ERROR, "disk full")
        return real_write(self, path, data, **options)

    monkeypatch.setattr(FileSystem, "write_atomic", flaky_write)
    result = await call("edit_files", {"paths": ["src/a.py", "src/b.py", "src/deep/c.py"], "edits": RENAME, "atomic": True})
    assert result.is_error
    assert text_of(result) == (
        f"INTERNAL_ERROR: atomic: writing {tree}/src/b.py failed (disk full); "
        "the 1 file(s) already written were restored, so nothing changed"
    )
    assert writes == [f"{tree}/src/a.py", f"{tree}/src/b.py", f"{tree}/src/a.py"]
    assert contents(tree) == before


async def test_without_atomic_a_failed_write_is_reported_inline(tree, call, monkeypatch):
    real_write = FileSystem.write_atomic

    def flaky_write(self, path, data, **options):
        if str(path).endswith("b.py"):
            raise ToolError(ErrorCode.PERMISSION_DENIED, "no")
        return real_write(self, path, data, **options)

    monkeypatch.setattr(FileSystem, "write_atomic", flaky_write)
    result = await call("edit_files", {"paths": ["src/a.py", "src/b.py"], "edits": RENAME})
    assert not result.is_error
    assert "src/b.py: [error PERMISSION_DENIED] no" in text_of(result)
    assert contents(tree)["src/a.py"] == "x = new_name\n"


async def test_read_only_root_reports_each_file(tree, call):
    result = await call("edit_files", {"paths": ["src/*.py"], "edits": RENAME}, roots=[f"{tree}:ro"])
    assert text_of(result).startswith("3 files: 0 edited, 0 unchanged, 3 failed.")
    assert "[error READ_ONLY]" in text_of(result)
