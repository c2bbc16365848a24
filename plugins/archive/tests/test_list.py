"""list_archive: the summary, one line per member, and a listing held to the output budget."""

from __future__ import annotations

import tarfile
import zipfile

import pytest

pytestmark = pytest.mark.anyio


async def test_a_long_listing_is_cut_to_the_budget_and_continues_with_offset(server, root, kit):
    (root / "many.zip").write_bytes(kit.zip([(f"dir/file-{n:03}.txt", b"x" * n) for n in range(100)]))
    async with server(budget=1000) as s:
        first = await s.ok("list_archive", archive="many.zip")
        lines = first.splitlines()
        assert len(first) <= 1000
        assert lines[0].startswith(f"{root}/many.zip (zip, ") and "100 members (100 files, 0 directories); 4,950 bytes" in lines[0]
        listed = len(lines) - 2
        assert lines[-1] == (
            f"[truncated: listed members 1-{listed} of 100 (output budget 1,000). Pass offset: {listed} to list the rest.]"
        )
        seen = [line.split()[-1] for line in lines[1:-1]]
        while True:
            more = (await s.ok("list_archive", archive="many.zip", offset=len(seen))).splitlines()
            seen += [line.split()[-1] for line in more[1:] if not line.startswith("[")]
            if not more[-1].startswith("[truncated"):
                break
        assert seen == [f"dir/file-{n:03}.txt" for n in range(100)]
        past = await s.ok("list_archive", archive="many.zip", offset=500)
        assert past.splitlines()[-1] == "[offset 500 is past the last member (100); nothing more to list]"


async def test_modes_a_zip_does_not_record_are_shown_as_dashes(server, root):
    info = zipfile.ZipInfo("dos.txt")
    info.create_system = 0
    with zipfile.ZipFile(root / "dos.zip", "w") as zf:
        zf.writestr(info, b"made on DOS")
    async with server() as s:
        text = await s.ok("list_archive", archive="dos.zip")
    assert text.splitlines()[1] == "file     ----           11 dos.txt"


async def test_names_with_control_characters_are_escaped(server, root, kit):
    (root / "odd.tar").write_bytes(kit.tar([(kit.info("line\nbreak.txt"), b"")]))
    async with server() as s:
        text = await s.ok("list_archive", archive="odd.tar")
    assert text.splitlines()[1] == "file     0644            0 line\\x0abreak.txt"


async def test_an_archive_over_the_limits_is_said_to_be_refused(server, root, kit):
    (root / "big.tar").write_bytes(kit.tar([(kit.info("a.bin"), bytes(3000))]))
    async with server(limits={"max_total_bytes": 1000}) as s:
        text = await s.ok("list_archive", archive="big.tar")
    assert text.splitlines()[1].startswith(
        f"extract_archive would refuse this archive: {root}/big.tar would extract to 3,000 bytes, over the max_total_bytes limit of 1,000"
    )


async def test_listing_holds_to_the_member_limit(server, root, kit):
    (root / "many.tar").write_bytes(kit.tar([(kit.info(f"f{n}"), b"") for n in range(30)]))
    async with server(limits={"max_members": 20}) as s:
        text = await s.fail("list_archive", "FILE_TOO_LARGE", archive="many.tar")
    assert "more than the max_members limit of 20" in text


async def test_a_hard_link_is_listed_with_what_it_copies(server, root, kit):
    (root / "h.tar").write_bytes(kit.tar([(kit.info("a"), b"data"), (kit.info("b", tarfile.LNKTYPE, "a"), None)]))
    async with server() as s:
        text = await s.ok("list_archive", archive="h.tar")
    assert text.splitlines()[1:] == ["file     0644            4 a", "hardlink 0644            0 b (hard link to a)"]


async def test_a_member_line_longer_than_the_budget_is_cut_and_the_listing_moves_on(server, root, kit):
    (root / "long.tar").write_bytes(kit.tar([(kit.info("d/" + "n" * 3000), b""), (kit.info("short.txt"), b"")]))
    async with server(budget=1000) as s:
        first = await s.ok("list_archive", archive="long.tar")
        second = await s.ok("list_archive", archive="long.tar", offset=1)
    assert len(first) <= 1000 and first.splitlines()[1].endswith("n…")
    assert first.splitlines()[-1].endswith("Pass offset: 1 to list the rest.]")
    assert second.splitlines()[1:] == ["file     0644            0 short.txt"]
