"""read_multiple_files: one part per file, failures inline, the budget shared fairly."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.anyio


async def test_one_part_per_file_in_order(root, call, texts):
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_bytes(b"beta\r\n")
    assert texts(await call("read_multiple_files", {"paths": ["b.txt", "a.txt", str(root / "a.txt")]})) == [
        "b.txt:\nbeta\r\n",
        "a.txt:\nalpha\n",
        f"{root / 'a.txt'}:\nalpha\n",
    ]


async def test_failures_are_inline_and_the_call_succeeds(root, call, texts):
    (root / "ok.txt").write_text("fine")
    (root / "dir").mkdir()
    parts = texts(await call("read_multiple_files", {"paths": ["missing.txt", "ok.txt", "dir", "../outside.txt"]}))
    assert parts[0].startswith("missing.txt:\n[error: NOT_FOUND ")
    assert parts[1] == "ok.txt:\nfine"
    assert parts[2].startswith("dir:\n[error: NOT_FILE ")
    assert parts[3].startswith("../outside.txt:\n[error: ACCESS_DENIED ")


async def test_binary_files_are_described_not_dumped(root, call, texts, png):
    (root / "pixel.png").write_bytes(png)
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    image, latin = texts(await call("read_multiple_files", {"paths": ["pixel.png", "latin1.txt"]}))
    assert image.startswith("pixel.png:\n[binary file: image/png, ") and "read_file" in image
    assert "\n" not in image.split(":\n", 1)[1]
    assert latin.startswith("latin1.txt:\ncaf\ufffd\n[note: 1 byte(s) are not valid UTF-8")


async def test_the_budget_is_shared_fairly(root, call, texts):
    (root / "small1.txt").write_text("s" * 50 + "\n")
    (root / "small2.txt").write_text("t" * 50 + "\n")
    (root / "huge1.txt").write_text("".join(f"a{i:05d}\n" for i in range(10_000)))
    (root / "huge2.txt").write_text("".join(f"b{i:05d}\n" for i in range(10_000)))
    paths = ["huge1.txt", "small1.txt", "huge2.txt", "small2.txt"]
    parts = texts(await call("read_multiple_files", {"paths": paths}, budget=4000))
    assert sum(map(len, parts)) <= 4000
    assert parts[1] == "small1.txt:\n" + "s" * 50 + "\n"
    assert parts[3] == "small2.txt:\n" + "t" * 50 + "\n"
    for part, prefix in ((parts[0], "a"), (parts[2], "b")):
        body = part.split(":\n", 1)[1]
        shown = [ln for ln in body.splitlines() if ln.startswith(prefix)]
        assert 100 < len(shown) < 10_000
        assert f"read the rest with read_file startLine={len(shown) + 1}" in body
    sizes = [len(parts[0]), len(parts[2])]
    assert abs(sizes[0] - sizes[1]) < 50


@pytest.mark.parametrize("paths", [[], [f"f{i}" for i in range(51)]])
async def test_path_count_is_1_to_50(call, failure, paths):
    result = await call("read_multiple_files", {"paths": paths})
    assert failure(result) == "INVALID_PARAMS"
    assert re.search(r"paths", result.content[0].text)
