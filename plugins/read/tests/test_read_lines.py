"""The streaming primitives against a plain in-memory model, on generated content."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from fsmcp_read import lines as lines_mod
from fsmcp_read.lines import iter_lines, locate_line, tail_start
from fsmcp_read.reader import take_tail_text, take_text

content = st.lists(st.sampled_from([b"a", b"\n", b"\r\n", "é".encode(), "✓".encode(), b"\xff"]), max_size=60).map(b"".join)


def model_lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    return out + ([parts[-1]] if parts[-1] else [])


@settings(max_examples=300, deadline=None)
@given(content, st.integers(1, 30), st.integers(0, 30))
def test_line_ranges_match_the_model(data, start, count):
    lines = model_lines(data)
    offset, counted = locate_line(io.BytesIO(data), start)
    if start > len(lines):
        assert offset is None and counted == len(lines)
        return
    assert offset == len(b"".join(lines[: start - 1]))
    taken = take_text(io.BytesIO(data), start=offset, budget=10_000, first_line=start, max_lines=count or None)
    expected = lines[start - 1 : start - 1 + count] if count else lines[start - 1 :]
    assert taken.text == b"".join(expected).decode("utf-8", "replace")
    assert taken.end == offset + len(b"".join(expected))


@settings(max_examples=300, deadline=None)
@given(content, st.integers(1, 30))
def test_tail_matches_the_model(data, count):
    lines = model_lines(data)
    start, complete = tail_start(io.BytesIO(data), len(data), count, window=1 << 20)
    assert complete
    assert data[start:] == b"".join(lines[-count:])
    taken = take_tail_text(io.BytesIO(data), size=len(data), lines=count, budget=10_000, numbered=True)
    expected = [f"{len(lines) - len(lines[-count:]) + i + 1} | " + ln.decode("utf-8", "replace") for i, ln in enumerate(lines[-count:])]
    assert taken.text == "".join(expected)


@settings(max_examples=200, deadline=None)
@given(content, st.integers(3, 7))
def test_pieces_rejoin_to_the_file_and_never_split_a_character(data, piece):
    old, lines_mod.PIECE = lines_mod.PIECE, piece
    try:
        pieces = list(iter_lines(io.BytesIO(data), 0))
    finally:
        lines_mod.PIECE = old
    assert b"".join(p for _, p, _ in pieces) == data
    assert all(data[offset : offset + len(part)] == part for offset, part, _ in pieces)
    assert "".join(p.decode("utf-8", "replace") for _, p, _ in pieces) == data.decode("utf-8", "replace")


@settings(max_examples=200, deadline=None)
@given(content, st.integers(10, 40))
def test_budgeted_reads_continue_without_loss(data, budget):
    out, start = [], 0
    while start < len(data):
        taken = take_text(io.BytesIO(data), start=start, budget=budget, first_line=None)
        assert len(taken.text) <= budget
        assert taken.end > start
        out.append(data[start : taken.end])
        start = taken.end
    assert b"".join(out) == data
