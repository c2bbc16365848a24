"""What a program changes is one change in the journal: listed in its result, undone exactly,
previewed with dryRun; the real server over stdio, the real kernel's overlay."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import anyio
import pytest

from fsmcp.testing import serve_stdio, text_of, tree_of

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
WITHOUT_USERNS = HERE.parents[2] / "tests" / "without_userns.py"
SHELL = "[plugins.shell]\nallow_shell = true\nallow = [\"sed\", \"cat\", \"touch\"]\n"


@pytest.fixture
def served(root, tmp_path):
    def serve(*roots: str, config: str = SHELL, **options):
        path = tmp_path / "fsmcp.toml"
        path.write_text(config)
        return serve_stdio(*(roots or (str(root),)), "--config", str(path), **options)

    return serve


def a_tree(root: Path) -> None:
    (root / "mod.txt").write_text("one\n")
    (root / "del.txt").write_text("bye\n")
    (root / "run.sh").write_text("echo hi\n")
    (root / "ren.txt").write_text("renamed\n")
    (root / "old").mkdir()
    (root / "old" / "x").write_text("x\n")
    (root / "keep").mkdir(mode=0o755)
    (root / "tree").mkdir()
    for i in range(5):
        (root / "tree" / f"f{i}").write_text(f"{i}\n")
    (root / "gone").symlink_to("mod.txt")
    (root / "repoint").symlink_to("mod.txt")


EVERYTHING = (
    "echo new > new.txt; echo two >> mod.txt; rm del.txt; chmod 755 run.sh; mv ren.txt renamed.txt; "
    "mv old moved; chmod 700 keep; ln -s new.txt link; rm gone; ln -sfn run.sh repoint; "
    "mkdir -p d/e; echo f > d/e/f; rm -rf tree; echo tree > tree"
)


async def test_a_shells_changes_are_listed_and_undone_exactly(root, served):
    a_tree(root)
    before = tree_of(root)
    async with served() as client:
        result = await client.call_tool("run_shell", {"command": EVERYTHING})
        text = text_of(result)
        assert text.startswith("exit_code: 0\nchanges: ") and "(one change: undo_change takes it back)" in text, text
        changes = result.structured_content["changes"]
        at = lambda *names: sorted(str(root / n) for n in names)  # noqa: E731
        # A directory it made is one path, all it holds with it (an undo removes it whole).
        assert sorted(changes["created"]) == at("new.txt", "renamed.txt", "moved", "link", "d", "tree")
        assert sorted(changes["modified"]) == at("mod.txt", "run.sh", "keep", "repoint")
        assert sorted(changes["deleted"]) == at("del.txt", "ren.txt", "old", "gone", "tree")
        assert (root / "mod.txt").read_text() == "one\ntwo\n" and (root / "tree").read_text() == "tree\n"
        assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o755 and os.readlink(root / "repoint") == "run.sh"
        number = result.structured_content["changeId"]
        assert isinstance(number, int)

        listed = text_of(await client.call_tool("list_changes", {}))
        assert listed.startswith(f"{number}  ") and "  run_shell  " in listed
        undone = await client.call_tool("undo_change", {"id": number})
        assert not undone.is_error, text_of(undone)
    assert tree_of(root) == before


async def test_a_programs_change_is_undone_after_a_restart(root, served):
    a_tree(root)
    before = tree_of(root)
    async with served() as client:
        result = await client.call_tool("run_shell", {"command": EVERYTHING})
        number = result.structured_content["changeId"]
    assert tree_of(root) != before
    async with served() as client:
        undone = await client.call_tool("undo_change", {"id": number})
        assert not undone.is_error, text_of(undone)
    assert tree_of(root) == before


async def test_sed_over_a_hundred_files_and_rm_of_a_thousand_are_each_undone(root, served):
    for i in range(100):
        (root / f"s{i:03}.py").write_text(f"a = {i}\nname = 'a'\n")
    sub = root / "build"
    for d in range(10):
        (sub / f"d{d}").mkdir(parents=True)
        for i in range(100):
            (sub / f"d{d}" / f"o{i}.o").write_bytes(bytes([d, i]) * 10)
    before = tree_of(root)
    async with served() as client:
        sed = await client.call_tool("run_shell", {"command": "sed -i s/a/b/ *.py"})
        assert len(sed.structured_content["changes"]["modified"]) == 100, text_of(sed)
        assert (root / "s007.py").read_text() == "b = 7\nnbme = 'a'\n"
        assert "modified: " in text_of(sed) and "and 80 more" in text_of(sed)
        rm = await client.call_tool("run_shell", {"command": "rm -rf build"})
        assert rm.structured_content["changes"]["deleted"] == [str(sub)] and not sub.exists()
        for result in (rm, sed):
            undone = await client.call_tool("undo_change", {"id": result.structured_content["changeId"]})
            assert not undone.is_error, text_of(undone)
    assert tree_of(root) == before


async def test_a_file_changed_meanwhile_is_not_overwritten(root, tmp_path, served):
    """Once the program runs (its first progress notification), write_file changes shared.txt;
    the program waits for a file in a read-only root (not under its view) that the test makes
    then: both versions survive, the rest applies."""
    (root / "shared.txt").write_text("before\n")
    sync = tmp_path / "sync"
    sync.mkdir()
    command = f"until [ -e {sync}/go ]; do sleep 0.05; done; echo program > shared.txt; echo mine > own.txt"
    async with served(str(root), f"{sync}:ro") as client:
        async with anyio.create_task_group() as tg:
            done: dict = {}
            running = anyio.Event()

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                running.set()

            async def run() -> None:
                done["result"] = await client.call_tool("run_shell", {"command": command, "timeout": 60}, progress_callback=progressed)

            tg.start_soon(run)
            await running.wait()
            written = await client.call_tool("write_file", {"path": str(root / "shared.txt"), "content": "other\n"})
            assert not written.is_error, text_of(written)
            (sync / "go").write_text("")
        result = done["result"]
    text = text_of(result)
    assert (root / "shared.txt").read_text() == "other\n"
    assert (root / "shared.txt.program-1").read_text() == "program\n"
    assert (root / "own.txt").read_text() == "mine\n"
    conflicts = result.structured_content["conflicts"]
    assert len(conflicts) == 1 and conflicts[0].startswith(f"{root}/shared.txt: changed while the program ran"), conflicts
    assert f"kept as {root}/shared.txt.program-1" in text, text


async def test_dry_run_names_every_change_and_changes_nothing(root, served):
    a_tree(root)
    before = tree_of(root)
    async with served() as client:
        result = await client.call_tool("run_shell", {"command": EVERYTHING, "dryRun": True})
        text = text_of(result)
        assert "changes (dryRun: nothing was applied, the roots are as they were): " in text, text
        changes = result.structured_content["changes"]
        assert len(changes["created"]) == 6 and len(changes["modified"]) == 4 and len(changes["deleted"]) == 5, changes
        assert f"+++ {root}/d/e/f\n@@ -0,0 +1 @@\n+f\n" in text  # what a new directory holds is in the diff
        assert f"--- {root}/mod.txt\n+++ {root}/mod.txt\n@@ -1 +1,2 @@\n one\n+two\n" in text
        assert f"--- /dev/null\n+++ {root}/new.txt\n@@ -0,0 +1 @@\n+new\n" in text
        assert result.structured_content["changeId"] is None
        assert text_of(await client.call_tool("list_changes", {})) == "No changes in the journal."
    assert tree_of(root) == before


async def test_a_program_that_changes_nothing_records_nothing(root, served):
    (root / "a.txt").write_text("a\n")
    async with served() as client:
        result = await client.call_tool("run_shell", {"command": "cat a.txt; cat a.txt > /dev/null"})
        assert text_of(result) == "exit_code: 0\nstdout:\na\nstderr:"
        assert result.structured_content["changes"] == {"created": [], "modified": [], "deleted": []}
        assert text_of(await client.call_tool("list_changes", {})) == "No changes in the journal."


async def test_what_no_tool_may_write_is_refused(root, served):
    async with served() as client:
        result = await client.call_tool("run_shell", {"command": "echo KEY=1 > .env; echo ok > ok.txt; mkdir -p new/sub; echo K=2 > new/.env; echo a > new/sub/a"})
    assert not (root / ".env").exists() and (root / "ok.txt").read_text() == "ok\n"
    # A new directory holding what may not come in comes in without it, the rest as made.
    assert not (root / "new" / ".env").exists() and (root / "new" / "sub" / "a").read_text() == "a\n"
    refused = result.structured_content["refused"]
    assert sorted(r.split(": ")[0] for r in refused) == [f"{root}/.env", f"{root}/new/.env"], refused
    assert sorted(result.structured_content["changes"]["created"]) == [f"{root}/new", f"{root}/new/sub", f"{root}/ok.txt"]


async def test_without_user_namespaces_a_program_writes_directly_and_says_so(root, served):
    async with served(under=WITHOUT_USERNS) as client:
        result = await client.call_tool("run_shell", {"command": "echo x > x.txt"})
        assert "changes: not recorded (this system allows no user namespace to mount it in): what it changed cannot be undone" in text_of(result)
        assert (root / "x.txt").read_text() == "x\n" and result.structured_content["changes"] is None
        refused = await client.call_tool("run_shell", {"command": "echo y > y.txt", "dryRun": True})
        assert refused.is_error and text_of(refused).startswith("INVALID_PARAMS: dryRun needs a copy-on-write view of the roots")
    assert not (root / "y.txt").exists()


async def test_require_undo_withholds_what_could_change_files(root, served):
    config = SHELL + "require_undo = true\n"
    async with served(config=config, under=WITHOUT_USERNS) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert "run_shell" not in names and "run_command" not in names
    reads = "[plugins.shell]\nallow_shell = true\nrequire_undo = true\n"  # the default commands only read
    async with served(config=reads, under=WITHOUT_USERNS) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert "run_command" in names and "run_shell" not in names
    async with served(config=config) as client:  # here the kernel makes views: both offered
        names = [t.name for t in (await client.list_tools()).tools]
    assert "run_shell" in names and "run_command" in names


async def test_the_view_keeps_every_promise_of_the_sandbox(root, outside, tmp_path, served):
    """Under its view a program still reads protected files empty, writes nothing outside the
    roots nor into its own upper layer, and a link out of the roots or a pipe it makes is not applied."""
    (root / ".env").write_text("KEY=secret\n")
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "r.txt").write_text("r\n")
    state = os.environ["XDG_STATE_HOME"]
    command = (
        f"cat .env; echo leak > {outside}/w.txt; echo ro > {ro}/r.txt; ls {state}/fsmcp/views; "
        f"touch {state}/fsmcp/views/x; ln -s {outside}/secret.txt out; mkfifo pipe; cp .env copy; echo end"
    )
    async with served(str(root), f"{ro}:ro") as client:
        result = await client.call_tool("run_shell", {"command": command})
    text = text_of(result)
    assert "KEY=secret" not in text and "\nend\n" in text, text
    assert not (outside / "w.txt").exists() and (ro / "r.txt").read_text() == "r\n"
    assert text.count("Permission denied") >= 4, text
    assert (root / ".env").read_text() == "KEY=secret\n" and (root / "copy").read_text() == ""
    refused = result.structured_content["refused"]
    assert sorted(r.split(":")[0] for r in refused) == [str(root / "out"), str(root / "pipe")], refused
    assert not (root / "out").exists() and not (root / "pipe").exists()
    assert os.listdir(Path(state) / "fsmcp" / "views") == []

