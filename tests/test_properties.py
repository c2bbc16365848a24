"""Property tests of everything that judges hostile input: paths, diffs, regexes, archive members.

Each property holds for any input: the path policy never lets an operation read or change
anything outside the root and fails only with a ToolError; the patch parser, the two regex
translators and the archive member checks answer or refuse (INVALID_PARAMS, PATCH_FAILED,
ACCESS_DENIED ...) and never crash. The budget is fixed and the examples derandomized, so CI
runs the same cases every time; ``FSMCP_DEEP_PROPERTIES=<n>`` runs n random examples per test
instead, to look for new failures. Every failure found is kept below as an ``@example``.
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import anyio
import fsmcp_archive.hooks
import fsmcp_patch.hooks
import fsmcp_search.hooks
import pytest
from fsmcp_edit.jsregex import compile_js
from fsmcp_patch.fence import unfence
from fsmcp_patch.parse import parse
from fsmcp_search.ecmascript import to_ripgrep
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fsmcp import ErrorCode, ToolError, ToolResult
from fsmcp.testing import host_for

_DEEP = int(os.environ.get("FSMCP_DEEP_PROPERTIES", "0"))


def budget(examples: int) -> settings:
    """The fixed CI budget: ``examples`` derandomized cases (or the deep run's random ones)."""
    return settings(
        max_examples=_DEEP or examples,
        derandomize=not _DEEP,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
    )


CANARY = "CANARY-outside-5e1d"
NAMES = ["a", "b", "c"]


# -- the path policy over random layouts and paths -----------------------------------------------

class World:
    """A root, emptied for every example (its descriptor stays valid), and its surroundings."""

    def __init__(self, top: Path):
        self.top = top
        self.root = top / "root"
        self.outside = top / "outside"
        self.evil = top / "root-evil"  # shares the root's prefix
        self.root.mkdir()
        self.fs = host_for([self.root]).fs
        self.pristine: dict[str, object] = {}
        """``state()`` as built, to tell whether an example left the surroundings as they were."""
        self.dirty = True
        """Whether the surroundings may differ from ``pristine`` (until an example ends finding them as built)."""

    def reset(self) -> None:
        for child in self.root.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        # The surroundings are built again only when the example before did not end by finding
        # them as built (it failed, or changed them): each passing example compares them with
        # ``pristine`` at its end, so comparing again here and at its start proves nothing more,
        # and was two thirds of the cost of ``state()`` (building them again for each of 600
        # examples was a third of the test's time: a directory's removal costs milliseconds).
        if not self.dirty:
            return
        for other in (self.outside, self.evil):
            shutil.rmtree(other, ignore_errors=True)
            for d in ("", *NAMES, "a/b"):
                (other / d).mkdir(parents=True, exist_ok=True)
                (other / d / "secret.txt").write_text(CANARY)
                (other / d / "only-outside").write_text(CANARY)
        self.pristine = self.state()
        self.dirty = False

    def state(self) -> dict[str, object]:
        """Every entry under the surroundings: its mode, and a link's target or a file's bytes."""
        seen: dict[str, object] = {}
        pending = [str(self.outside), str(self.evil)]
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    mode = entry.stat(follow_symlinks=False).st_mode
                    if stat.S_ISDIR(mode):
                        pending.append(entry.path)
                    seen[entry.path] = (mode, os.readlink(entry.path) if stat.S_ISLNK(mode) else _read(entry.path) if stat.S_ISREG(mode) else None)
        return seen


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def world():
    top = Path(tempfile.mkdtemp(prefix="fsmcp-properties-")).resolve()
    yield World(top)
    shutil.rmtree(top, ignore_errors=True)


# Mostly names that exist in the layouts, so that operations get through as often as they are refused.
component = st.sampled_from([*NAMES * 5, "..", ".", "", "secret.txt", "only-outside", "outside", "root", "root-evil", "~", "é", "x\x00y", "\udc80", "C:"])


@st.composite
def raw_paths(draw) -> str:
    parts = draw(st.lists(component, min_size=1, max_size=4))
    start = draw(st.sampled_from(["", "", "", "", "", "/", "{root}/", "{top}/", "{outside}/", "../", "~/"]))
    return start + "/".join(parts)


link_targets = st.sampled_from([
    "a", "b", "../a", "..", ".", "../..", "../outside", "../../outside", "../../../outside/secret.txt",
    "{outside}", "{outside}/a", "{root}/a", "{root}", "{evil}", "nowhere", "self", "a/../../outside", "/",
    "b/../..", "\ud800",
])  # fmt: skip


@st.composite
def layouts(draw) -> list[tuple[str, str, str]]:
    """(relative path, kind, link target) entries to create inside the root."""
    entries = []
    for depth_names in draw(st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), max_size=12)):
        kind = draw(st.sampled_from(["dir", "dir", "file", "link"]))
        entries.append(("/".join(depth_names), kind, draw(link_targets)))
    return entries


def build(w: World, layout: list[tuple[str, str, str]]) -> None:
    for rel, kind, target in layout:
        path = w.root / rel
        if not Path(os.path.realpath(path.parent)).is_relative_to(w.root):
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue  # a file on the way
        if os.path.lexists(path):
            continue
        if kind == "dir":
            path.mkdir()
        elif kind == "file":
            path.write_text("inside")
        else:
            try:
                os.symlink(fill(w, target).replace("self", path.name), path)
            except (UnicodeEncodeError, ValueError):
                pass


def fill(w: World, text: str) -> str:
    return text.format(root=w.root, top=w.top, outside=w.outside, evil=w.evil)


OPERATIONS = ["read_bytes", "stat", "kind", "list_dir", "walk", "readlink", "write_atomic", "append", "mkdir",
              "remove", "rename", "copy", "symlink", "chmod", "snapshot"]  # fmt: skip


def run(w: World, op: str, path: str, other: str, flag: bool) -> object:
    fs = w.fs
    if op == "read_bytes":
        return fs.read_bytes(path)
    if op == "stat":
        return fs.stat(path, follow_links=flag)
    if op == "kind":
        return fs.kind(path, follow_links=flag)
    if op == "list_dir":
        return fs.list_dir(path)
    if op == "walk":
        return list(fs.walk(path, breadth_first=flag))
    if op == "readlink":
        return fs.readlink(path)
    if op == "write_atomic":
        return fs.write_atomic(path, b"written", overwrite=flag)
    if op == "append":
        return fs.append(path, b"appended", create=flag)
    if op == "mkdir":
        return fs.mkdir(path, parents=flag)
    if op == "remove":
        return fs.remove(path, recursive=flag)
    if op == "rename":
        return fs.rename(path, other, overwrite=flag)
    if op == "copy":
        return fs.copy(path, other, overwrite=flag)
    if op == "symlink":
        return fs.symlink(path, other)
    if op == "chmod":
        return fs.chmod(path, 0o700)
    snap = fs.snapshot([path, other])
    try:
        fs.remove(path, recursive=True)
    finally:
        snap.restore()
    return None


def leaked(w: World, result: object) -> bool:
    if CANARY in repr(result) or "only-outside" in repr(result):
        return True
    for item in result if isinstance(result, list) else []:
        entry = item[2] if isinstance(item, tuple) else item
        # A link's target is described only when it lies inside.
        if entry.target_kind is not None and w.fs.roots.containing(Path(os.path.realpath(entry.path))) is None:
            return True
    return False


@budget(600)
@given(
    layout=layouts(),
    steps=st.lists(st.tuples(st.sampled_from(OPERATIONS), raw_paths(), raw_paths() | link_targets, st.booleans()), min_size=1, max_size=4),
)
@example(layout=[("a", "link", "\ud800")], steps=[("symlink", "b", "\ud800", False)])
@example(layout=[("a", "dir", ""), ("a/b", "link", "../../outside")], steps=[("walk", "a", "x", True), ("write_atomic", "a/b/secret.txt", "", True)])
@example(layout=[("a", "link", "{outside}")], steps=[("snapshot", "a/secret.txt", "a", False), ("copy", "a", "c", True)])
def test_the_path_policy_never_leads_out(world, layout, steps):
    w = world
    w.reset()
    w.dirty = True
    build(w, layout)
    for op, path, other, flag in steps:
        try:
            result = run(w, op, fill(w, path), fill(w, other), flag)
        except ToolError:
            continue
        assert not leaked(w, result), f"{op}({path!r}, {other!r}) leaked: {result!r}"
    assert w.state() == w.pristine, f"{steps} changed something outside the root"
    w.dirty = False


# -- the patch parser and patch_apply ------------------------------------------------------------

diff_names = st.sampled_from(["a.txt", "dir/b.txt", "new.txt", "../outside/secret.txt", "/etc/passwd", "a/a.txt", "b/a.txt", "", " ", "dir", "é.txt"])
diff_line = st.one_of(
    st.builds(lambda n: f"--- {n}", diff_names),
    st.builds(lambda n: f"+++ {n}", diff_names),
    st.sampled_from(["--- /dev/null", "+++ /dev/null", "\\ No newline at end of file", "```diff", "```", "", "Binary files a and b differ",
                     "new file mode 100644", "deleted file mode 100644", "index 0123abc..4567def 100644", "similarity index 90%"]),
    st.builds(lambda a, b: f"diff --git a/{a} b/{b}", diff_names, diff_names),
    st.builds(lambda a: f"rename from {a}", diff_names),
    st.builds(lambda a: f"rename to {a}", diff_names),
    st.builds(lambda a, b, c, d: f"@@ -{a},{b} +{c},{d} @@", st.integers(-1, 6), st.integers(-1, 6), st.integers(-1, 6), st.integers(-1, 6)),
    st.builds(lambda a, c: f"@@ -{a} +{c} @@ heading", st.integers(0, 99999999999), st.integers(0, 4)),
    st.builds(lambda s, t: s + t, st.sampled_from([" ", "-", "+"]), st.sampled_from(["line one", "line two", "", "x", "\r", "\ufeffbom"])),
    st.text(max_size=20),
)
diffs = st.builds(lambda lines, eol: eol.join(lines), st.lists(diff_line, min_size=1, max_size=25), st.sampled_from(["\n", "\r\n", "\r"]))
PATCH_CODES = {ErrorCode.PATCH_FAILED, ErrorCode.INVALID_PARAMS, ErrorCode.ACCESS_DENIED, ErrorCode.NOT_FOUND, ErrorCode.ALREADY_EXISTS,
               ErrorCode.NOT_FILE, ErrorCode.NOT_DIRECTORY, ErrorCode.FILE_TOO_LARGE}  # fmt: skip


@budget(1500)
@given(text=diffs | st.text() | st.binary().map(lambda b: b.decode("latin-1")))
@example(text="--- a.txt\n+++ a.txt\n@@ -99999999999 +1 @@\n-x\n+y\n")
def test_the_patch_parser_answers_or_refuses(text):
    try:
        sections = parse(unfence(text))
    except ToolError as exc:
        assert exc.code in (ErrorCode.INVALID_PARAMS, ErrorCode.PATCH_FAILED), exc
    else:
        assert isinstance(sections, list) and sections


@pytest.fixture(scope="module")
def patch_world():
    top = Path(tempfile.mkdtemp(prefix="fsmcp-patch-properties-")).resolve()
    yield top
    shutil.rmtree(top, ignore_errors=True)


@budget(300)
@given(text=diffs, dry_run=st.booleans())
def test_patch_apply_answers_or_refuses_and_stays_inside(patch_world, text, dry_run):
    root, outside = patch_world / "root", patch_world / "outside"
    for d in (root, outside):
        shutil.rmtree(d, ignore_errors=True)
        (d / "dir").mkdir(parents=True)
        (d / "a.txt").write_text("line one\nline two\n")
        (d / "dir" / "b.txt").write_text("x\n")
    (outside / "secret.txt").write_text(CANARY)
    host = host_for([root], [("patch", fsmcp_patch.hooks)])
    outcome = anyio.run(host.runner.run, "patch_apply", {"patch": text, "dryRun": dry_run})
    if isinstance(outcome, ToolError):
        assert outcome.code in PATCH_CODES, outcome
    else:
        assert isinstance(outcome, ToolResult)
        assert CANARY not in repr(outcome.parts)
    assert (outside / "secret.txt").read_text() == CANARY
    assert sorted(p.name for p in outside.rglob("*")) == ["a.txt", "b.txt", "dir", "secret.txt"]


def test_a_diff_from_nothing_to_nothing_is_refused(patch_world):
    (patch_world / "empty").mkdir(exist_ok=True)
    host = host_for([patch_world / "empty"], [("patch", fsmcp_patch.hooks)])
    outcome = anyio.run(host.runner.run, "patch_apply", {"patch": "--- /dev/null\n+++ /dev/null\n"})
    assert not isinstance(outcome, ToolError) or outcome.code in PATCH_CODES, outcome


# -- the regex translators ----------------------------------------------------------------------

regex_chars = st.sampled_from([
    *"()[]{}?*+|^$\\.-,:<>=!/^dDwWsSbBnrtvfuxckpPq0123456789aAzZ_ é\u0663\n",
    "(?<n>", "(?:", "(?=", "(?<!", "\\u{1F600}", "\\p{L}", "[^]", "{2,}", "{,3}", "\\k<n>", "{4294967296}",
])  # fmt: skip
patterns = st.lists(regex_chars, max_size=24).map("".join) | st.text(max_size=16)


@budget(2000)
@given(pattern=patterns.filter(lambda p: "4294967296" not in p), ignore_case=st.booleans(), dot_all=st.booleans())
@example(pattern="[\\d-z]", ignore_case=False, dot_all=False)
def test_the_edit_regex_translator_compiles_or_refuses(pattern, ignore_case, dot_all):
    try:
        compiled = compile_js(pattern, ignore_case=ignore_case, dot_all=dot_all)
    except ToolError as exc:
        assert exc.code is ErrorCode.INVALID_PARAMS, exc
        return
    compiled.compiled.search("abc é 12\r\nXYZ_ (x) [y]")


def test_an_edit_regex_repeat_count_too_large_is_invalid_params():
    with pytest.raises(ToolError) as info:
        compile_js("a{4294967296}")
    assert info.value.code is ErrorCode.INVALID_PARAMS


@budget(1500)
@given(pattern=patterns)
def test_the_search_regex_translator_translates_or_refuses(pattern):
    try:
        translated = to_ripgrep(pattern)
    except ToolError as exc:
        assert exc.code is ErrorCode.INVALID_PARAMS, exc
        return
    assert isinstance(translated, str)


@pytest.fixture(scope="module")
def search_host():
    top = Path(tempfile.mkdtemp(prefix="fsmcp-search-properties-")).resolve()
    (top / "a.txt").write_text("abc é 12\r\nXYZ_ (x) [y]\n")
    yield host_for([top], [("search", fsmcp_search.hooks)])
    shutil.rmtree(top, ignore_errors=True)


def grep(host, pattern: str, ignore_case: bool = False) -> ToolResult | ToolError:
    return anyio.run(host.runner.run, "grep_files", {"regex": pattern, "directory": ".", "caseInsensitive": ignore_case})


@budget(150)
@given(pattern=patterns.filter(lambda p: "\x00" not in p), ignore_case=st.booleans())
def test_grep_files_searches_or_refuses_any_pattern(search_host, pattern, ignore_case):
    """What the translator lets through, ripgrep compiles, or the tool says INVALID_PARAMS."""
    outcome = grep(search_host, pattern, ignore_case)
    if isinstance(outcome, ToolError):
        assert outcome.code is ErrorCode.INVALID_PARAMS, outcome


def test_a_nul_in_a_grep_pattern_is_invalid_params(search_host):
    outcome = grep(search_host, "a\x00b")
    assert isinstance(outcome, ToolResult) or outcome.code is ErrorCode.INVALID_PARAMS, outcome


# -- the archive member checks ------------------------------------------------------------------

member_names = st.lists(st.sampled_from(["a", "b", "..", ".", "", "/", "\\", "C:", "link", "é", "A"]), min_size=1, max_size=4).map("/".join)
link_names = st.sampled_from(["a", "../outside", "../../outside/secret.txt", "link", "/", "a/b", "..", "link/..", "/etc/passwd"])


@st.composite
def tar_archives(draw) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for _ in range(draw(st.integers(1, 6))):
            info = tarfile.TarInfo(draw(member_names))
            kind = draw(st.sampled_from(["file", "dir", "symlink", "hardlink", "fifo"]))
            if kind == "file":
                data = b"archived"
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            info.linkname = draw(link_names)
            tar.addfile(info)
    return out.getvalue()


@st.composite
def zip_archives(draw) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for _ in range(draw(st.integers(1, 6))):
            info = zipfile.ZipInfo(draw(member_names))
            if draw(st.booleans()):
                info.external_attr = (stat.S_IFLNK | 0o777) << 16  # a symlink: its data is the target
                archive.writestr(info, draw(link_names))
            else:
                archive.writestr(info, b"archived")
    return out.getvalue()


@pytest.mark.filterwarnings("ignore:Duplicate name")
@budget(250)
@given(archive=tar_archives() | zip_archives(), overwrite=st.booleans())
def test_archives_are_listed_and_extracted_inside_or_refused(patch_world, archive, overwrite):
    """The archive member checks, end to end: any member list, listed and extracted for real."""
    root, outside = patch_world / "xroot", patch_world / "outside"
    for d in (root, outside):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    (outside / "secret.txt").write_text(CANARY)
    (root / "dest").mkdir()
    (root / "in.archive").write_bytes(archive)
    host = host_for([root], [("archive", fsmcp_archive.hooks)])
    for name, args in (("list_archive", {"archive": "in.archive"}),
                       ("extract_archive", {"archive": "in.archive", "destination": "dest", "overwrite": overwrite})):  # fmt: skip
        outcome = anyio.run(host.runner.run, name, args)
        if isinstance(outcome, ToolError):
            assert outcome.code is not ErrorCode.INTERNAL_ERROR, outcome
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"] and (outside / "secret.txt").read_text() == CANARY
    for path in root.rglob("*"):
        if path.is_symlink():
            assert Path(os.path.realpath(path)).is_relative_to(root.resolve()), f"{path} -> {os.readlink(path)}"
        assert not stat.S_ISFIFO(path.lstat().st_mode), path


def test_a_zip_that_claims_several_disks_is_refused(patch_world):
    """Found by fuzz/fuzz.py archive: zipfile's BadZipFile escaped as INTERNAL_ERROR (fixed)."""
    root = patch_world / "zroot"
    root.mkdir(exist_ok=True)
    (root / "multi.zip").write_bytes(base64.b64decode("UEsGB8TExAAAxMTExMTEU1NTU65QSwUGSwUGU1NTAFAFBksFBlNTU1BOBQYpU04FBilTClM0NDRTTFMG"))
    outcome = anyio.run(host_for([root], [("archive", fsmcp_archive.hooks)]).runner.run, "list_archive", {"archive": "multi.zip"})
    assert not isinstance(outcome, ToolError) or outcome.code is not ErrorCode.INTERNAL_ERROR, outcome
