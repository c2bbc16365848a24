"""Hostile archives, built here with zipfile and tarfile: each refused, nothing written anywhere."""

from __future__ import annotations

import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from fsmcp import shown_name

pytestmark = pytest.mark.anyio


@pytest.fixture
def refused(server, root: Path, outside: Path, kit):
    """``await refused(data, code)``: extracting ``data`` fails with ``code`` and changes no file at all."""

    async def check(data: bytes, code: str, *, name: str = "evil.bin", limits: dict | None = None, **settings) -> str:
        (root / name).write_bytes(data)
        (root / "dest").mkdir(exist_ok=True)
        (root / "dest" / "keep.txt").write_text("kept\n")
        before = kit.tree(root.parent)
        async with server(limits=limits, **settings) as s:
            text = await s.fail("extract_archive", code, archive=name, destination="dest")
        assert kit.tree(root.parent) == before
        assert text.endswith("nothing was extracted"), text
        return text

    return check


def zip_info(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


@pytest.mark.parametrize("name", ["../../x.txt", "a/../../x.txt", "..\\..\\x.txt", "ok/..\\..\\..\\x.txt"])
async def test_zip_slip_is_refused_naming_the_member(refused, kit, root, name):
    text = await refused(kit.zip([("fine.txt", b"fine"), (name, b"pwned")]), "ACCESS_DENIED")
    assert f"member {shown_name(name)} of {root}/evil.bin has '..' in its name, which climbs out of the destination" in text
    assert not (root / "x.txt").exists() and not (root.parent / "x.txt").exists()


async def test_tar_slip_is_refused(refused, kit):
    text = await refused(kit.tar([(kit.info("../outside/secret.txt"), b"overwritten")]), "ACCESS_DENIED")
    assert "member ../outside/secret.txt " in text


async def test_a_nul_byte_in_a_name_is_refused(refused, kit):
    data = kit.zip([("a/b.txt", b"x")]).replace(b"a/b.txt", b"a\0b.txt")
    assert "member a\\x00b.txt of" in await refused(data, "ACCESS_DENIED")


async def test_a_zip_whose_local_name_differs_from_its_directory_is_refused(refused, kit):
    data = bytearray(kit.zip([("a.txt", b"fine"), ("b.txt", b"other")]))
    second = data.find(b"PK\x03\x04", 1)
    data[second + 30 : second + 35] = b"../xx"
    assert "File name in directory 'b.txt' and header b'../xx' differ" in await refused(bytes(data), "INVALID_PARAMS")


async def test_setuid_setgid_and_sticky_bits_are_never_extracted(server, root, kit):
    (root / "s.tar").write_bytes(
        kit.tar([(kit.info("d", tarfile.DIRTYPE, mode=0o1777), None), (kit.info("d/run", mode=0o6755), b"#!/bin/sh\n")])
    )
    async with server() as s:
        await s.ok("extract_archive", archive="s.tar", destination="out")
    assert kit.tree(root / "out") == {"d": ("dir", 0o777), "d/run": ("file", b"#!/bin/sh\n", 0o755)}


@pytest.mark.parametrize(
    "name, why",
    [
        ("/tmp/evil.txt", "has an absolute name"),
        ("//server/share/evil.txt", "has an absolute name"),
        ("\\windows\\evil.txt", "has an absolute name"),
        ("C:/evil.txt", "starts with a drive letter"),
        ("c:evil.txt", "starts with a drive letter"),
    ],
)
async def test_absolute_names_and_drive_letters_are_refused(refused, kit, name, why):
    text = await refused(kit.zip([(name, b"pwned")]), "ACCESS_DENIED")
    assert why in text


async def test_absolute_tar_member_pointing_outside_is_refused(refused, kit, outside, secret):
    await refused(kit.tar([(kit.info(str(outside / "secret.txt")), b"overwritten")]), "ACCESS_DENIED")
    assert (outside / "secret.txt").read_text() == secret


async def test_a_link_to_etc_then_a_file_written_through_it_is_refused(refused, kit):
    passwd = Path("/etc/passwd").read_bytes()
    data = kit.tar([(kit.info("link", tarfile.SYMTYPE, "/etc"), None), (kit.info("link/passwd"), b"root::0:0::/:/bin/sh\n")])
    text = await refused(data, "ACCESS_DENIED")
    assert "member link of" in text and "is a link to the absolute path '/etc', outside the destination" in text
    assert "(2 members are refused in all; list_archive marks each)" in text
    assert Path("/etc/passwd").read_bytes() == passwd


async def test_a_file_below_a_link_is_refused_even_when_the_link_stays_inside(refused, kit):
    data = kit.tar([(kit.info("sub", tarfile.DIRTYPE), None), (kit.info("l", tarfile.SYMTYPE, "sub"), None), (kit.info("l/x"), b"x")])
    text = await refused(data, "ACCESS_DENIED")
    assert "member l/x of" in text and "lies below the link member l; writing through a link could leave the destination" in text


async def test_a_link_differing_only_in_case_still_guards_what_lies_below_it(refused, kit):
    data = kit.tar([(kit.info("Out", tarfile.SYMTYPE, "."), None), (kit.info("out/x"), b"x")])
    assert "lies below the link member Out" in await refused(data, "ACCESS_DENIED")


@pytest.mark.parametrize("target", ["../../outside", "a/../../..", "../..", "./.././../x"])
async def test_relative_link_targets_that_leave_the_destination_are_refused(refused, kit, target):
    data = kit.tar([(kit.info("a", tarfile.DIRTYPE), None), (kit.info("a/up", tarfile.SYMTYPE, target), None)])
    assert "which leads outside the destination" in await refused(data, "ACCESS_DENIED")


async def test_a_link_target_that_climbs_through_another_link_is_refused(refused, kit):
    # "l -> ." stays inside; "m -> l/.." lexically is the destination, but on disk is its parent.
    data = kit.tar([(kit.info("l", tarfile.SYMTYPE, "."), None), (kit.info("m", tarfile.SYMTYPE, "l/.."), None)])
    assert "passes through the link member l" in await refused(data, "ACCESS_DENIED")


async def test_a_zip_link_member_to_etc_is_refused(refused, kit):
    data = kit.zip([(zip_info("etc-link", stat.S_IFLNK | 0o777), b"/etc"), ("etc-link/passwd", b"pwned")])
    assert "member etc-link of" in await refused(data, "ACCESS_DENIED")


@pytest.mark.parametrize("target", ["../outside/secret.txt", "/etc/passwd"])
async def test_a_hard_link_out_of_the_destination_is_refused(refused, kit, target):
    data = kit.tar([(kit.info("h", tarfile.LNKTYPE, target), None)])
    assert f"is a hard link to {target!r}, outside the destination" in await refused(data, "ACCESS_DENIED")


async def test_a_hard_link_to_a_file_that_is_not_a_member_is_refused(refused, kit):
    data = kit.tar([(kit.info("h", tarfile.LNKTYPE, "keep.txt"), None)])
    assert "is a hard link to 'keep.txt', which is not a file earlier in the archive" in await refused(data, "ACCESS_DENIED")


async def test_a_hard_link_to_an_earlier_member_becomes_a_copy(server, root, kit):
    (root / "h.tar").write_bytes(kit.tar([(kit.info("a.txt", mode=0o640), b"shared"), (kit.info("b.txt", tarfile.LNKTYPE, "a.txt"), None)]))
    async with server() as s:
        text = await s.ok("extract_archive", archive="h.tar", destination="out")
    assert text == f"Extracted 2 members (12 bytes) from {root}/h.tar (tar) into {root}/out: 1 file, 0 directories, 1 hard link (copied)"
    assert kit.tree(root / "out") == {"a.txt": ("file", b"shared", 0o640), "b.txt": ("file", b"shared", 0o640)}


@pytest.mark.parametrize(
    "kind, why",
    [(tarfile.CHRTYPE, "is a device file"), (tarfile.BLKTYPE, "is a device file"), (tarfile.FIFOTYPE, "is a named pipe (FIFO)")],
)
async def test_device_and_fifo_members_are_refused(refused, kit, kind, why):
    info = kit.info("dev/thing", kind)
    info.devmajor, info.devminor = 1, 3
    text = await refused(kit.tar([(kit.info("dev", tarfile.DIRTYPE), None), (info, None)]), "INVALID_PARAMS")
    assert f"member dev/thing of" in text and f"{why}; extraction never creates one" in text


async def test_a_zip_member_with_device_mode_bits_is_refused(refused, kit):
    data = kit.zip([(zip_info("null", stat.S_IFCHR | 0o666), b"")])
    assert "is a device file" in await refused(data, "INVALID_PARAMS")


async def test_a_member_named_twice_is_refused(refused, kit):
    data = kit.tar([(kit.info("a.txt"), b"first"), (kit.info("./a.txt"), b"second")])
    assert "appears twice in the archive" in await refused(data, "INVALID_PARAMS")


async def test_list_archive_marks_each_member_extraction_would_refuse(server, root, kit):
    data = kit.tar([(kit.info("ok.txt"), b"ok"), (kit.info("link", tarfile.SYMTYPE, "/etc"), None), (kit.info("link/passwd"), b"x")])
    (root / "evil.tar").write_bytes(data)
    async with server() as s:
        lines = (await s.ok("list_archive", archive="evil.tar")).splitlines()
    assert lines[1] == "extract_archive would refuse 2 members, marked [refused: ...] below"
    assert lines[2] == "file     0644            2 ok.txt"
    assert lines[3] == (
        "symlink  0644            0 link -> /etc  "
        "[refused: ACCESS_DENIED: is a link to the absolute path '/etc', outside the destination]"
    )
    assert lines[4].startswith("file     0644            1 link/passwd  [refused: ACCESS_DENIED: lies below the link member link")
