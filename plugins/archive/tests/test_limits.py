"""Bombs and damaged archives: the limits hold on headers and on the real bytes, and nothing is left."""

from __future__ import annotations

import gzip
import random
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest
import fsmcp_archive.hooks
from fsmcp_archive.options import Limits
from fsmcp_archive.members import Member, Tally

from fsmcp import ToolError
from fsmcp.run.host import HostError
from fsmcp.testing import host_for

pytestmark = pytest.mark.anyio

ZEROS = bytes(4 << 20)


@pytest.fixture
def refused(server, root: Path, kit):
    """``await refused(data, code, limits=...)``: extraction fails, and no file anywhere changed (no staging left)."""

    async def check(data: bytes, code: str, *, limits: dict | None = None, **settings) -> str:
        (root / "bomb.bin").write_bytes(data)
        (root / "dest").mkdir(exist_ok=True)
        (root / "dest" / "keep.txt").write_text("kept\n")
        before = kit.tree(root.parent)
        async with server(limits=limits, **settings) as s:
            text = await s.fail("extract_archive", code, archive="bomb.bin", destination="dest")
        assert kit.tree(root.parent) == before
        return text

    return check


async def test_a_zip_with_more_members_than_the_limit_is_refused_before_its_directory_is_read(refused, kit):
    data = kit.zip([(f"f{n}.txt", b"") for n in range(51)])
    text = await refused(data, "FILE_TOO_LARGE", limits={"max_members": 50})
    assert "holds 51 members, more than the max_members limit of 50; it is refused unread" in text
    assert "the operator can raise max_members under [plugins.archive] in fsmcp.toml" in text


async def test_a_zip_whose_directory_record_understates_its_members_is_still_counted(refused, kit):
    data = bytearray(kit.zip([(f"f{n}.txt", b"") for n in range(60)]))
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = struct.pack("<HH", 5, 5)
    text = await refused(bytes(data), "FILE_TOO_LARGE", limits={"max_members": 50})
    assert "more members than its directory record says" in text


async def test_a_tar_member_count_bomb_is_refused_at_the_default_limit(refused, kit):
    data = kit.tar([(kit.info(f"d/{n}"), b"") for n in range(10_001)], mode="w:gz")
    assert len(data) < 100_000
    assert "more than the max_members limit of 10,000" in await refused(data, "FILE_TOO_LARGE")


async def test_a_small_zip_of_zeros_expanding_past_the_total_limit_is_refused(refused, kit):
    data = kit.zip([("zeros.bin", ZEROS)])
    assert len(data) < 10_000
    text = await refused(data, "FILE_TOO_LARGE", limits={"max_total_bytes": 1 << 20, "max_ratio": 10_000})
    assert f"declares at least {len(ZEROS):,} bytes of members, over the max_total_bytes limit of 1,048,576" in text
    assert "raise max_total_bytes" in text


async def test_a_tiny_tar_whose_header_declares_gigabytes_is_refused(refused, kit):
    info = kit.info("huge.bin")
    info.size = 5 << 30
    data = info.tobuf(tarfile.PAX_FORMAT) + b"only a few real bytes".ljust(512, b"\0") + bytes(1024)
    text = await refused(data, "FILE_TOO_LARGE")
    assert "declares at least 5,368,709,120 bytes of members, over the max_total_bytes limit of 1,073,741,824" in text


async def test_with_a_higher_limit_the_lying_tar_is_found_truncated(refused, kit):
    info = kit.info("huge.bin")
    info.size = 5 << 30
    data = info.tobuf(tarfile.PAX_FORMAT) + bytes(1536)
    text = await refused(data, "INVALID_PARAMS", limits={"max_total_bytes": 6 << 30}, max_file_bytes=6 << 30)
    assert "is damaged or not a valid archive (unexpected end of data)" in text


async def test_a_zip_member_past_the_compression_ratio_is_refused_from_its_header(refused, kit):
    text = await refused(kit.zip([("fine.txt", b"fine"), ("zeros.bin", ZEROS)]), "FILE_TOO_LARGE")
    assert "member zeros.bin of" in text and "past the max_ratio limit of 200:1 (a compression bomb?)" in text
    assert "raise max_ratio" in text


async def test_a_gzip_tar_of_zeros_past_the_ratio_is_refused_before_its_data_is_decompressed(refused, kit):
    data = kit.tar([(kit.info("zeros.bin"), ZEROS)], mode="w:gz")
    assert "past the max_ratio limit of 200:1" in await refused(data, "FILE_TOO_LARGE")


async def test_the_ratio_limit_is_held_to_the_real_bytes_of_a_compressed_tar(refused, kit):
    # Random bytes after the zeros keep the archive's overall ratio low, so the headers pass;
    # the stream is measured as it is extracted, and the zeros give it away.
    noise = random.Random(7).randbytes(1 << 20)
    data = kit.tar([(kit.info("zeros.bin"), ZEROS), (kit.info("noise.bin"), noise)], mode="w:gz")
    text = await refused(data, "FILE_TOO_LARGE", limits={"max_ratio": 50})
    assert "member zeros.bin of" in text and "past the max_ratio limit of 50:1" in text


async def test_a_pax_header_record_of_megabytes_is_refused_before_it_is_read_into_memory(refused, kit):
    info = kit.info("a.txt")
    info.pax_headers = {"comment": "x" * (2 << 20)}
    data = kit.tar([(info, b"a")], mode="w:gz")
    assert "has a tar header record of 2,097,6" in await refused(data, "FILE_TOO_LARGE")


async def test_a_member_over_the_servers_write_limit_is_refused(refused, kit):
    text = await refused(kit.zip([("big.bin", bytes(2000))], zipfile.ZIP_STORED), "FILE_TOO_LARGE", max_file_bytes=1000)
    assert "is 2,000 bytes, over the server's max_file_bytes write limit of 1,000" in text


async def test_a_zip_whose_header_understates_a_members_size_is_refused(refused, kit):
    data = bytearray(kit.zip([("a.txt", b"small"), ("b.txt", bytes(100_000))]))
    local = data.find(b"PK\x03\x04", 1)
    central = data.rfind(b"PK\x01\x02")
    data[local + 22 : local + 26] = struct.pack("<I", 10)
    data[central + 24 : central + 28] = struct.pack("<I", 10)
    assert "Bad CRC-32 for file 'b.txt'" in await refused(bytes(data), "INVALID_PARAMS")


async def test_a_damaged_member_after_good_ones_leaves_no_staged_file_behind(refused, kit):
    data = bytearray(kit.zip([("a.txt", b"first member, fine"), ("b.txt", b"second member " * 1000)]))
    second = data.find(b"PK\x03\x04", 1) + 30 + len("b.txt")
    data[second + 10 : second + 20] = b"\xff" * 10
    text = await refused(bytes(data), "INVALID_PARAMS")
    assert "is damaged or not a valid archive" in text


@pytest.mark.parametrize(
    "data, why",
    [
        (b"just some text\n", "is not a zip or tar archive"),
        (b"", "is empty, not an archive"),
        # mtime=0: the same bytes, so the same test id, in each of pytest-xdist's workers
        (gzip.compress(b"a gzip file, not a tar\n" * 30, mtime=0), "is damaged or not a valid archive"),
        (b"\x28\xb5\x2f\xfd" + bytes(40), "is a zstd-compressed file"),
        (zlib.compress(b"x"), "is not a zip or tar archive"),
    ],
)
async def test_what_is_not_an_archive_is_refused(refused, data, why):
    assert why in await refused(data, "INVALID_PARAMS")


async def test_a_zip_claiming_several_disks_is_refused_as_invalid(refused, kit):
    data = bytearray(kit.zip([("a.txt", b"a")]))
    end = data.rfind(b"PK\x05\x06")
    data[end:end] = b"PK\x06\x07" + struct.pack("<IQI", 0, 0, 2)  # a zip64 locator: "2 disks"
    assert "zipfiles that span multiple disks are not supported" in await refused(bytes(data), "INVALID_PARAMS")


async def test_a_truncated_gzip_tar_is_refused(refused, kit):
    data = kit.tar([(kit.info(f"f{n}"), bytes(range(256)) * 400) for n in range(3)], mode="w:gz")
    await refused(data[: len(data) // 2], "INVALID_PARAMS")


async def test_bad_limits_in_the_configuration_stop_the_start(root):
    for limits, why in [({"max_members": 0}, "max_members must be a positive integer"), ({"max_size": 1}, "unknown option(s) max_size")]:
        with pytest.raises(HostError) as info:
            host_for([root], [("archive", fsmcp_archive.hooks)], plugins={"archive": limits})
        assert why in str(info.value) and "[plugins.archive]" in str(info.value)


def test_real_bytes_past_the_header_total_or_ratio_stop_the_tally():
    member = Member("m", "file", 100, 0o644, packed=1)
    tally = Tally(Limits(max_total_bytes=150, max_ratio=50), "a.zip")
    tally.add(member, 100, 100, None)
    with pytest.raises(ToolError, match="holds more data than the 100 bytes its header declares"):
        tally.add(member, 101, 1, None)
    with pytest.raises(ToolError, match="expands past the max_total_bytes limit of 150"):
        Tally(Limits(max_total_bytes=150), "a.zip").add(Member("m", "file", 1000, None), 151, 151, None)
    with pytest.raises(ToolError, match="expands 51:1, past the max_ratio limit of 50:1"):
        Tally(Limits(max_ratio=50), "a.zip").add(member, 51, 51, 51.0)


@pytest.mark.parametrize(
    "local, central, value, why",
    [
        (6, 8, 0x1, "is encrypted, and extraction cannot decrypt"),
        (8, 10, 9, "uses compression method 9, which this server cannot read"),
    ],
)
async def test_zip_members_that_cannot_be_read_are_refused_before_any_is_written(refused, kit, local, central, value, why):
    data = bytearray(kit.zip([("a.txt", b"fine"), ("b.txt", b"sealed")], zipfile.ZIP_STORED))
    second = data.find(b"PK\x03\x04", 1)
    directory = data.rfind(b"PK\x01\x02")
    data[second + local : second + local + 2] = struct.pack("<H", value)
    data[directory + central : directory + central + 2] = struct.pack("<H", value)
    assert f"member b.txt of" in (text := await refused(bytes(data), "INVALID_PARAMS")) and why in text
