"""The parser and applier directly: difflib's diff of old → new, applied to old, gives new byte for
byte; the readers of the model formats answer or refuse, and patch_apply stays inside the roots."""

from __future__ import annotations

import difflib
import shutil
import tempfile
from pathlib import Path

import anyio
import fsmcp_patch.hooks
import pytest
from fsmcp import ErrorCode, ToolError, ToolResult
from fsmcp.testing import host_for
from fsmcp_patch.apply import Mismatch, apply
from fsmcp_patch.fence import unfence
from fsmcp_patch.formats import read
from fsmcp_patch.parse import parse
from hypothesis import given, settings
from hypothesis import strategies as st

# A small alphabet makes repeated lines, so a hunk's context often occurs more than once.
line_text = st.sampled_from(["", "x", "y", "{", "}", "    return x", "é", "naïve ✓", "\t tab", "-- dashes", "+ plus", "@@"])


@st.composite
def files(draw):
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    lines = draw(st.lists(line_text, max_size=30))
    final = draw(st.booleans()) or not lines
    return "".join(t + eol for t in lines[:-1]) + (lines[-1] + (eol if final else "") if lines else ""), eol


@st.composite
def edits(draw, text: str, eol: str):
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(0, 5))):
        at = draw(st.integers(0, len(lines)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        new = [t + eol for t in draw(st.lists(line_text, min_size=1, max_size=3))]
        if action == "insert" or at == len(lines):
            lines[at:at] = new
        elif action == "delete":
            del lines[at : at + draw(st.integers(1, 3))]
        else:
            lines[at : at + 1] = new
    if lines and draw(st.booleans()):
        lines[-1] = lines[-1].rstrip("\r\n")
    return "".join(lines)


def unified(old: str, new: str, context: int) -> str:
    out = []
    for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/f", "b/f", n=context):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def patched(old: str, diff: str) -> bytes:
    (section,) = parse(unfence(diff))
    return apply(old.encode(), section.hunks, section.literal_eol).data


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_diff_applied_to_old_gives_new_and_its_inverse_gives_old(data):
    old, eol = data.draw(files())
    new = data.draw(edits(old, eol))
    context = data.draw(st.integers(0, 3))
    forward, backward = unified(old, new, context), unified(new, old, context)
    if not forward:
        return
    fenced = data.draw(st.booleans())

    assert patched(old, f"```diff\n{forward}```\n" if fenced else forward) == new.encode()
    assert patched(new, backward) == old.encode()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_diff_whose_context_is_changed_never_applies_wrongly(data):
    old, eol = data.draw(files())
    new = data.draw(edits(old, eol))
    diff = unified(old, new, 2)
    lines = diff.splitlines(keepends=True)
    body = [i for i, line in enumerate(lines) if line[:1] in " -" and not line.startswith("--- ")]
    if not body:
        return
    i = data.draw(st.sampled_from(body))
    lines[i] = lines[i][0] + "corrupted " + lines[i][1:]
    try:
        result = patched(old, "".join(lines))
    except Mismatch:
        return
    # A corrupted line can only apply where the file really holds it, which it never does.
    raise AssertionError(f"applied a hunk whose line {lines[i]!r} is in no file: {result!r}")


def test_a_lone_surrogate_in_an_added_line_is_invalid_params():
    with pytest.raises(ToolError) as caught:
        patched("a\n", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+\ud800\n")
    assert caught.value.code is ErrorCode.INVALID_PARAMS


# -- the model formats ---------------------------------------------------------------------------

marker_line = st.sampled_from(
    [
        "*** Begin Patch", "*** End Patch", "*** Add File: f", "*** Delete File: f", "*** Update File: f",
        "*** Move to: g", "*** End of File", "@@", "@@ x", "@@ -1,2 +1,2 @@", "<<<<<<< SEARCH", "=======",
        ">>>>>>> REPLACE", "f", "```", "+x", "-x", " x", "+", "-", " ",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(marker_line, line_text), max_size=25), st.data())
def test_the_model_formats_are_read_and_applied_or_refused_never_crash(lines, data):
    text = "\n".join(lines) + "\n"
    try:
        _, sections = read(text)
    except ToolError as exc:
        assert exc.code is ErrorCode.INVALID_PARAMS
        return
    old, _ = data.draw(files())
    for section in sections:
        try:
            apply(old.encode(), section.hunks, section.literal_eol)
        except Mismatch:
            pass


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_block_replacing_a_whole_file_gives_the_new_file_in_the_file_s_line_endings(data):
    eol = data.draw(st.sampled_from(["\n", "\r\n"]))
    old = data.draw(st.lists(line_text, min_size=1, max_size=20).filter(lambda ls: any(t.strip() for t in ls)))
    new = data.draw(st.lists(line_text, max_size=20))
    block = "f\n<<<<<<< SEARCH\n" + "".join(t + "\n" for t in old) + "=======\n" + "".join(t + "\n" for t in new) + ">>>>>>> REPLACE\n"
    (section,) = read(block)[1]
    result = apply("".join(t + eol for t in old).encode(), section.hunks, section.literal_eol)
    assert result.data == "".join(t + eol for t in new).encode()


names = st.sampled_from(["a.txt", "dir/b.txt", "new.txt", "../outside/secret.txt", "../outside/dir/b.txt", "dir", "é.txt", "/tmp"])
texts = st.sampled_from(["line one", "line two", "  line two", "x", "", "secret"])
hunk_lines = st.lists(st.builds(lambda op, t: op + t, st.sampled_from([" ", "-", "+"]), texts), min_size=1, max_size=4)
hunk = st.builds(lambda at, body, end: [*at, *body, *end], st.lists(st.builds(lambda t: f"@@ {t}".rstrip(), texts), max_size=2), hunk_lines, st.sampled_from([[], ["*** End of File"]]))
section = st.one_of(
    st.builds(lambda n, body: [f"*** Add File: {n}", *(f"+{t}" for t in body)], names, st.lists(texts, max_size=3)),
    st.builds(lambda n: [f"*** Delete File: {n}"], names),
    st.builds(
        lambda n, move, hunks: [f"*** Update File: {n}", *([f"*** Move to: {move}"] if move else []), *(line for h in hunks for line in h)],
        names, st.one_of(st.none(), names), st.lists(hunk, min_size=1, max_size=3),
    ),
)
apply_patch_text = st.builds(lambda ss: ["*** Begin Patch", *(line for s in ss for line in s), "*** End Patch"], st.lists(section, min_size=1, max_size=3))
block = st.builds(
    lambda n, old, new: [n, "```", "<<<<<<< SEARCH", *old, "=======", *new, ">>>>>>> REPLACE", "```"], names, st.lists(texts, max_size=3), st.lists(texts, max_size=3)
)
blocks_text = st.builds(lambda bs: [line for b in bs for line in b], st.lists(block, min_size=1, max_size=3))
model_text = st.one_of(apply_patch_text, blocks_text, st.lists(st.one_of(marker_line, line_text), min_size=1, max_size=20))
CANARY = "canary-5e2b"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return tmp_path_factory.mktemp("formats-world")


@settings(max_examples=200, deadline=None)
@given(lines=model_text, dry_run=st.booleans())
def test_the_model_formats_end_to_end_answer_or_refuse_and_stay_inside(world, lines, dry_run):
    # A fresh directory each time: direct calls share one session, which remembers what it changed.
    here = Path(tempfile.mkdtemp(dir=world))
    root, outside = here / "root", here / "outside"
    for d in (root, outside):
        (d / "dir").mkdir(parents=True)
        (d / "a.txt").write_text("line one\nline two\n")
        (d / "dir" / "b.txt").write_text("x\n")
    (outside / "secret.txt").write_text(CANARY)
    host = host_for([root], [("patch", fsmcp_patch.hooks)])
    outcome = anyio.run(host.runner.run, "patch_apply", {"patch": "\n".join(lines) + "\n", "dryRun": dry_run})
    if isinstance(outcome, ToolError):
        allowed = {ErrorCode.PATCH_FAILED, ErrorCode.INVALID_PARAMS, ErrorCode.ACCESS_DENIED, ErrorCode.NOT_FOUND, ErrorCode.ALREADY_EXISTS, ErrorCode.NOT_FILE}
        assert outcome.code in allowed, outcome
    else:
        assert isinstance(outcome, ToolResult)
        assert CANARY not in repr(outcome.parts)
    assert (outside / "secret.txt").read_text() == CANARY
    assert sorted(p.name for p in outside.rglob("*")) == ["a.txt", "b.txt", "dir", "secret.txt"]
    shutil.rmtree(here)
