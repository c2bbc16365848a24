"""The default path policy, checked directly on RootSet (the tools' tests check it end to end)."""

import os
from pathlib import Path

import pytest

from fsmcp import Access, ErrorCode, ToolError
from fsmcp.paths.roots import RootSet


@pytest.fixture
def layout(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f.txt").write_text("in")
    evil = tmp_path / "root-evil"
    evil.mkdir()
    (evil / "secret.txt").write_text("SECRET")
    (root / "out_link").symlink_to(evil)
    (root / "in_link").symlink_to(root / "sub")
    (root / "dangling_out").symlink_to(evil / "nothing-yet")
    ro = tmp_path / "ro"
    ro.mkdir()
    roots, warnings = RootSet.from_specs([str(root), f"{ro}:ro"])
    assert warnings == []
    return roots, root.resolve(), evil.resolve(), ro.resolve()


def refused(roots, raw, access=Access.READ, follow=True) -> ToolError:
    with pytest.raises(ToolError) as info:
        roots.confine(raw, access, follow)
    return info.value


def test_inside_paths_resolve_to_real_paths(layout):
    roots, root, _, _ = layout
    assert roots.confine(str(root / "sub" / "f.txt"), Access.READ).path == root / "sub" / "f.txt"
    assert roots.confine("sub/f.txt", Access.READ).path == root / "sub" / "f.txt"
    assert roots.confine("in_link/f.txt", Access.READ).path == root / "sub" / "f.txt"
    assert roots.confine(".", Access.READ).is_root


@pytest.mark.parametrize(
    "raw",
    ["../root-evil/secret.txt", "sub/../../root-evil/secret.txt", "out_link/secret.txt", "out_link", "dangling_out", "/etc/passwd"],
)
def test_escapes_are_denied(layout, raw):
    roots = layout[0]
    assert refused(roots, raw).code is ErrorCode.ACCESS_DENIED


def test_sibling_with_same_prefix_is_outside(layout):
    roots, root, evil, _ = layout
    assert str(evil).startswith(str(root))
    err = refused(roots, str(evil / "secret.txt"))
    assert err.code is ErrorCode.ACCESS_DENIED
    assert "SECRET" not in err.message


def test_new_file_resolves_through_deepest_existing_ancestor(layout):
    roots, root, _, _ = layout
    assert roots.confine("sub/new/deeper/x.txt", Access.WRITE).path == root / "sub" / "new" / "deeper" / "x.txt"
    # A new file under a symlinked parent that points outside is outside.
    assert refused(roots, "out_link/new.txt", Access.WRITE).code is ErrorCode.ACCESS_DENIED
    # Missing components followed by `..` climb physically, not back into the root.
    assert refused(roots, "missing/../../root-evil/x", Access.WRITE).code is ErrorCode.ACCESS_DENIED


def test_acting_on_a_link_itself_keeps_the_final_component(layout):
    roots, root, _, _ = layout
    resolved = roots.confine("out_link", Access.WRITE, follow_links=False)
    assert resolved.path == root / "out_link"
    assert not resolved.follows_links


@pytest.mark.parametrize("raw", ["a\x00b", "sub/\x00", "C:\\Windows\\win.ini", "\\\\server\\share", "x\ud800", "x\udfff"])
def test_unrepresentable_paths_are_denied(layout, raw):
    assert refused(layout[0], raw).code is ErrorCode.ACCESS_DENIED


def test_a_byte_that_is_not_utf8_is_named_escaped_or_as_its_surrogate(layout):
    roots, root, _, _ = layout
    held = os.fsdecode(b"bad\xff")
    assert roots.confine("bad\\xff", Access.READ).path == roots.confine(held, Access.READ).path == root / held
    assert str(roots.confine(held, Access.READ)) == f"{root}/bad\\xff"


def test_empty_path_is_invalid(layout):
    assert refused(layout[0], "").code is ErrorCode.INVALID_PARAMS


def test_read_only_root_and_global_read_only(layout):
    roots, root, _, ro = layout
    assert roots.confine(str(ro / "x"), Access.READ).root.read_only
    assert refused(roots, str(ro / "x"), Access.WRITE).code is ErrorCode.READ_ONLY
    everything_ro = RootSet(roots.roots, read_only=True)
    assert refused(everything_ro, str(root / "sub" / "f.txt"), Access.WRITE).code is ErrorCode.READ_ONLY
    assert everything_ro.confine(str(root / "sub" / "f.txt"), Access.READ)


def test_nested_read_only_root_decides_for_its_subtree(tmp_path):
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    roots, _ = RootSet.from_specs([str(outer), f"{inner}:ro"])
    assert roots.confine(str(outer / "a"), Access.WRITE)
    assert refused(roots, str(inner / "a"), Access.WRITE).code is ErrorCode.READ_ONLY


def test_home_expansion(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "notes.txt").write_text("x")
    roots, _ = RootSet.from_specs([str(tmp_path)])
    assert roots.confine("~/notes.txt", Access.READ).path == tmp_path.resolve() / "notes.txt"


def test_root_specs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    link = tmp_path / "link_to_a"
    link.symlink_to(tmp_path / "a")
    roots, warnings = RootSet.from_specs(["a", f"{link}:ro", "missing"])
    # The same real directory twice is one root; the first spec wins.
    assert [(r.path, r.read_only) for r in roots.roots] == [(tmp_path.resolve() / "a", False)]
    assert warnings == ["root 'missing' is not an existing directory; skipped"]
    with pytest.raises(ValueError):
        RootSet.from_specs(["missing"])


def test_default_root_is_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    roots, _ = RootSet.from_specs([])
    assert roots.roots[0].path == Path(os.path.realpath(tmp_path))


def test_real_paths_read_from_the_root_down_agree_with_realpath(tmp_path):
    # Below a root only its own components are read (a root was real at start-up); what that
    # gives must be what os.path.realpath gives for every shape of path.
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("x")
    (root / "link_a").symlink_to(root / "a")
    (root / "a" / "up").symlink_to("..")
    (root / "chain").symlink_to("link_a/b")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    (root / "dangling").symlink_to("nowhere/deeper")
    (root / "out").symlink_to(tmp_path)
    (root / "plain.txt").write_text("x")
    roots, _ = RootSet.from_specs([str(root)])
    r = str(root.resolve())
    assert [top for top, _ in roots._real_tops] == [r]  # the short way is the one under test
    tails = [
        "", "/", "/a", "/a/", "/a/b/f.txt", "/a/./b//f.txt", "/link_a/b/f.txt", "/a/up/a/b", "/chain/f.txt",
        "/a/b/../b/f.txt", "/link_a/../plain.txt", "/loop1", "/loop1/x", "/dangling", "/dangling/x", "/out",
        "/out/root/a", "/missing", "/missing/deeper/f.txt", "/plain.txt/below", "/a/b/f.txt/", "/..", "/../root/a",
    ]
    for tail in tails:
        absolute = r + tail
        for follow in (True, False):
            if follow:
                expected = Path(os.path.realpath(absolute))
            else:
                head, name = os.path.split(absolute.rstrip("/") or "/")
                expected = Path(os.path.realpath(absolute)) if name in ("", ".", "..") else Path(os.path.realpath(head)) / name
            real = roots._real_text(absolute, follow)
            assert real == str(Path(real)) and Path(real) == expected, (tail, follow)  # normalised text, the real path
