"""The diff of a sequence of edits: change tracking and hunks, checked by applying the diff back."""

import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fsmcp import ToolError
from fsmcp_edit.regions import track
from fsmcp_edit.diff import unified_diff
from fsmcp_edit.engine import apply_edits
from fsmcp_edit.models import EditItem

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_unified(old: str, diff: str) -> str:
    """A strict applier: every hunk at exactly its line numbers, every context line checked."""
    lines = old.split("\n")
    ends_without_newline = not old.endswith("\n")
    if not ends_without_newline:
        lines.pop()
    body = diff.split("\n")[2:]
    out, at, k = [], 0, 0
    while k < len(body):
        m = HUNK.fullmatch(body[k])
        assert m, body[k]
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out += lines[at:start]
        at = start
        k += 1
        while k < len(body) and not body[k].startswith("@@"):
            mark, text = body[k][0], body[k][1:]
            if mark in " -":
                assert lines[at] == text, (at, lines[at], text)
                at += 1
            if mark in " +":
                out.append(text)
            if mark == "\\" and body[k - 1][0] in " +":
                out[-1] += "\0"
            k += 1
    out += lines[at:]
    if ends_without_newline and at < len(lines) and out and not out[-1].endswith("\0"):
        out[-1] += "\0"
    text = "".join(line[:-1] if line.endswith("\0") else line + "\n" for line in out)
    return text


line_texts = st.text(alphabet="ab x", max_size=4)
texts = st.lists(line_texts, min_size=1, max_size=30).map("\n".join) | st.lists(line_texts, max_size=30).map(lambda ls: "".join(x + "\n" for x in ls))


@st.composite
def line_edit_items(draw):
    action = draw(st.sampled_from(["insert", "replace", "delete"]))
    number = draw(st.integers(-4, 12).filter(lambda n: n != 0 or action == "insert"))
    item = {"type": "line", "line_number": number, "action": action}
    if action != "delete":
        item["content"] = draw(st.lists(line_texts, min_size=1, max_size=3).map("\n".join))
    return EditItem(**item)


replace_items = st.builds(
    lambda old, new: EditItem(old_text=old, new_text=new, limit=0),
    st.sampled_from(["a", "b", "x", "\n", "a\n", "\nb", "ab"]),
    st.text(alphabet="xy\n", max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(text=texts, items=st.lists(line_edit_items() | replace_items, min_size=1, max_size=8))
def test_the_diff_of_many_edits_applies_back_to_the_new_text(text, items):
    valid, current = [], text
    for item in items:
        try:
            current = apply_edits(current, [item]).text
        except ToolError:
            continue
        valid.append(item)
    assume(valid)
    outcome = apply_edits(text, valid)
    assert outcome.text == current
    diff = unified_diff("f", text, outcome.text, outcome.changes)
    if text == outcome.text:
        assert diff.text == ""
        return
    assert apply_unified(text, diff.text) == outcome.text


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="abc\n", max_size=40), data=st.data())
def test_tracked_changes_cover_every_difference(text, data):
    original, changes = text, []
    for _ in range(data.draw(st.integers(1, 6))):
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
        spans = [(a, b, data.draw(st.text(alphabet="xyz\n", max_size=3))) for a, b in zip(cuts[::2], cuts[1::2])]
        pieces, at = [], 0
        for a, b, new in spans:
            pieces += [text[at:a], new]
            at = b
        text = "".join(pieces + [text[at:]])
        changes = track(changes, spans)
    old_at = new_at = 0
    for c in changes:
        assert original[old_at : c.old_start] == text[new_at : c.new_start]
        assert c.old_start <= c.old_end and c.new_start <= c.new_end
        old_at, new_at = c.old_end, c.new_end
    assert original[old_at:] == text[new_at:]
