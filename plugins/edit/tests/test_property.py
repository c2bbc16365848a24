"""Properties over random files and edits, through the real server.

An edit changes only the bytes of the span it matched; an edit followed by its inverse gives
back the original bytes; an edit that fails leaves the file exactly as it was.
"""

import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fsmcp.testing import connect, host_for, text_of
from fsmcp_edit import hooks

# Latin-1 é, UTF-8 é, tabs, spaces and regex/template metacharacters, which must all stay literal.
TOKENS = [b"a", b"b", b"x", b" ", b"\t", b"$1", b"\\1", b"(", b".*", b"\xe9", "é".encode()]
EOLS = {"lf": [b"\n"], "crlf": [b"\r\n"], "mixed": [b"\n", b"\r\n"]}
BOM = b"\xef\xbb\xbf"


@st.composite
def files(draw):
    style = draw(st.sampled_from(sorted(EOLS)))
    lines = draw(st.lists(st.lists(st.sampled_from(TOKENS), max_size=6).map(b"".join), min_size=1, max_size=8))
    eols = [draw(st.sampled_from(EOLS[style])) for _ in lines]
    if not draw(st.booleans()):
        eols[-1] = b""
    body = b"".join(line + eol for line, eol in zip(lines, eols))
    return (BOM if draw(st.booleans()) else b"") + body, style


def decode(data):
    bom = BOM if data.startswith(BOM) else b""
    return bom, data[len(bom) :].decode("utf-8", "surrogateescape")


def normalized_with_offsets(text):
    """The text with CRLF as LF, and for each normalized offset the offset in ``text``."""
    norm, offsets, i = [], [], 0
    while i < len(text):
        offsets.append(i)
        if text.startswith("\r\n", i):
            norm.append("\n")
            i += 2
        else:
            norm.append(text[i])
            i += 1
    offsets.append(len(text))
    return "".join(norm), offsets


def occurrences(haystack, needle):
    return sum(1 for i in range(len(haystack)) if haystack.startswith(needle, i))


def reindented(before, one_line, several):
    """Whether an edit of ``one_line`` (preceded on its line by ``before``'s tail) re-indents ``several``."""
    indent = before[before.rfind("\n") + 1 :]
    later = [line for line in several.rstrip("\n").split("\n")[1:] if line.strip()]
    return (
        "\n" not in one_line.rstrip("\n")
        and bool(indent) and not indent.strip(" \t")
        and bool(later) and not any(line.startswith(indent) for line in later)
    )


def byte_offset(bom, text, index):
    return len(bom) + len(text[:index].encode("utf-8", "surrogateescape"))


@pytest.fixture
def files_root(tmp_path):
    """One host for all of a test's examples, each in a new directory of its root.

    A host's start (its plugins registered, its tool list's schemas made) was most of an
    example's cost; each call still comes from a new client connection (a session of its own,
    which has seen no file), and each example's file lies in a directory no other example touched.
    """
    top = tmp_path / "files"
    top.mkdir()
    top = top.resolve()
    return top, host_for([top], [("edit", hooks)])


def new_file(files_root, data):
    top, _ = files_root
    path = Path(tempfile.mkdtemp(dir=top)) / "f.txt"
    path.write_bytes(data)
    return path


async def call_edit(files_root, path, edits):
    _, host = files_root
    async with connect(host) as client:
        return await client.call_tool("edit_file", {"path": str(path), "edits": edits})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file=files(), data=st.data())
def test_an_edit_and_its_inverse_restore_the_file(files_root, file, data):
    original, style = file
    path = new_file(files_root, original)
    bom, text = decode(original)
    norm, offsets = normalized_with_offsets(text)
    assume(norm)
    i = data.draw(st.integers(0, len(norm) - 1), label="start")
    j = data.draw(st.integers(i + 1, len(norm)), label="end")
    old = norm[i:j]
    assume(old.isprintable() or "\n" in old or "\t" in old)
    try:
        old.encode("utf-8")
    except UnicodeEncodeError:
        assume(False)
    new = "⟨" + data.draw(st.text(alphabet="ab \n$\\é", max_size=6), label="new") + "⟩"

    result = anyio.run(call_edit, files_root, path, [{"oldText": old, "newText": new}])
    if occurrences(norm, old) > 1:
        assert result.is_error and text_of(result).startswith("NOT_UNIQUE"), text_of(result)
        assert path.read_bytes() == original
        return
    assert not result.is_error, text_of(result)
    edited = path.read_bytes()
    begin = byte_offset(bom, text, offsets[i])
    end = byte_offset(bom, text, offsets[j])
    assert edited[:begin] == original[:begin]
    assert edited[len(edited) - (len(original) - end) :] == original[end:]

    if reindented(norm[:i], old, new):
        return  # a one-line text at a line's indentation: new's later lines were shifted by design
    inverse = anyio.run(call_edit, files_root, path, [{"oldText": new, "newText": old}])
    assert not inverse.is_error, text_of(inverse)
    if reindented(norm[:i], new, old):
        return  # likewise for the inverse, which shifts old's later lines
    # With one line-ending style the inverse has it to go by, unless the edit removed every break.
    if style == "lf" or (style == "crlf" and b"\r\n" in edited):
        assert path.read_bytes() == original


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file=files(), failing=st.sampled_from(["missing", "missing-group", "second-edit", "bad-line"]), data=st.data())
def test_a_failed_edit_never_changes_the_file(files_root, file, failing, data):
    original, _ = file
    path = new_file(files_root, original)
    _, text = decode(original)
    norm, _ = normalized_with_offsets(text)
    edits = {
        "missing": [{"oldText": "⟨absent⟩", "newText": "x"}],
        "missing-group": [{"oldText": "(a)|b|x|$", "newText": "$2", "isRegex": True}],
        "second-edit": [
            {"type": "line", "lineNumber": 0, "action": "insert", "content": data.draw(st.text("ab", max_size=3))},
            {"oldText": "⟨absent⟩", "newText": "x"},
        ],
        "bad-line": [{"type": "line", "lineNumber": norm.count("\n") + 3, "action": "delete"}],
    }[failing]
    result = anyio.run(call_edit, files_root, path, edits)
    assert result.is_error
    assert path.read_bytes() == original
