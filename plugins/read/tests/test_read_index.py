"""The line index of big files: right after any change, and a second range reads one block."""

from __future__ import annotations

import os
import random

import pytest

from fsmcp_read import index
from fsmcp_read.lines import count_newlines, locate_line


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    # Blocks of 4 KiB and no size floor: the index logic on files of a few hundred KiB.
    monkeypatch.setattr(index, "STEP", 1 << 12)
    monkeypatch.setattr(index, "SMALLEST", 1)
    monkeypatch.setattr("fsmcp_read.lines.STEP", 1 << 12)
    monkeypatch.setattr(index, "_indexes", index.OrderedDict())


class Counted:
    """A real file that counts the bytes read through it."""

    def __init__(self, path):
        self._fh = open(path, "rb")  # noqa: SIM115
        self.read_bytes = 0

    def read(self, n=-1):
        data = self._fh.read(n)
        self.read_bytes += len(data)
        return data

    def seek(self, *args):
        return self._fh.seek(*args)

    def fileno(self):
        return self._fh.fileno()

    def close(self):
        self._fh.close()


def lines_of(seed: int, count: int) -> bytes:
    rng = random.Random(seed)
    return b"".join(b"%d " % i + b"x" * rng.choice([0, 3, 80, 5000]) + b"\n" for i in range(count))


def truth(data: bytes, line: int) -> int | None:
    at = 0
    for _ in range(line - 1):
        at = data.find(b"\n", at) + 1
        if at == 0:
            return None
    return at if at < len(data) else None


def test_ranges_and_counts_agree_with_the_file(tmp_path):
    data = lines_of(1, 400)
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    rng = random.Random(2)
    fh = Counted(path)
    for _ in range(300):
        line = rng.randint(1, 420)
        assert locate_line(fh, line)[0] == truth(data, line)
        offset = rng.randint(0, len(data))
        assert count_newlines(fh, offset) == data[:offset].count(b"\n")
    fh.close()


def test_a_second_deep_range_reads_one_block_not_the_file(tmp_path):
    data = lines_of(3, 400)
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    first = Counted(path)
    assert locate_line(first, 390)[0] == truth(data, 390)
    first.close()
    again = Counted(path)
    assert locate_line(again, 385)[0] == truth(data, 385)
    again.close()
    assert first.read_bytes > len(data) // 2
    assert again.read_bytes <= 3 * index.STEP


def test_a_changed_file_gets_a_new_index(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(lines_of(4, 400))
    fh = Counted(path)
    locate_line(fh, 390)
    fh.close()
    # Other lines, with the mtime put back as it was.
    changed = lines_of(5, 400)
    stat = path.stat()
    path.write_bytes(changed)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    fh = Counted(path)
    for line in (2, 100, 390, 399):
        assert locate_line(fh, line)[0] == truth(changed, line)
    fh.close()


def test_the_number_of_indexes_kept_is_bounded(tmp_path):
    for i in range(index.KEPT + 5):
        path = tmp_path / f"f{i}.txt"
        path.write_bytes(lines_of(i, 100))
        fh = Counted(path)
        locate_line(fh, 90)
        fh.close()
    assert len(index._indexes) == index.KEPT
