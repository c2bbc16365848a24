"""MCP Roots: a client's roots narrow the operator's, never widen them, in both protocol eras."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import fsmcp_read.hooks
import fsmcp_workspace.hooks
import fsmcp_write.hooks
import pytest
from mcp import MCPDeprecationWarning, types
from pydantic import ValidationError

from fsmcp import Access, ErrorCode, Root, ToolError
from fsmcp.paths.roots import RootSet, root_path
from fsmcp.testing import connect, host_for, serve_stdio, text_of

PLUGINS = [("read", fsmcp_read.hooks), ("write", fsmcp_write.hooks), ("workspace", fsmcp_workspace.hooks)]
MODES = ["auto", "legacy"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``srv`` is the operator's root; ``srv/proj`` and ``srv/other`` lie inside it, ``away`` outside."""
    base = tmp_path.resolve()
    for name, text in [("srv/proj/a.txt", "in proj"), ("srv/other/b.txt", "in other"), ("away/c.txt", "away"), ("beside.txt", "beside")]:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    return base


class Roots:
    """What the client offers as its MCP roots; change ``uris`` and the next answer changes."""

    def __init__(self, *uris: str):
        self.uris = list(uris)
        self.asked = 0

    async def __call__(self, ctx) -> types.ListRootsResult:
        self.asked += 1
        return types.ListRootsResult(roots=[root(u) for u in self.uris])


def root(raw: str) -> types.Root:
    try:
        return types.Root(uri=raw)
    except ValidationError:
        # A test client may offer roots the SDK's own model refuses, as a careless client would.
        return types.Root.model_construct(uri=raw, name=None)


def uri(path: Path) -> str:
    return path.as_uri()


async def call(client, name: str, **args) -> tuple[bool, str]:
    result = await client.call_tool(name, args)
    return bool(result.is_error), text_of(result)


async def allowed(client) -> str:
    is_error, text = await call(client, "list_allowed_directories")
    assert not is_error, text
    return text


async def roots_changed(client) -> None:
    with warnings.catch_warnings():
        # Roots are deprecated in 2026-07-28; a handshake-era client still sends this.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.send_roots_list_changed()


# -- through the SDK's client, in process, in both eras ------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_narrower_client_root_narrows_access(tree, mode):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(uri(tree / "srv" / "proj")), mode=mode) as client:
        assert await allowed(client) == f"{tree / 'srv' / 'proj'} (read-write)"
        assert await call(client, "read_file", path=str(tree / "srv" / "proj" / "a.txt")) == (False, "in proj")
        # The workspace follows the usable roots: relative paths land in the client's root.
        assert await call(client, "read_file", path="a.txt") == (False, "in proj")
        is_error, text = await call(client, "read_file", path=str(tree / "srv" / "other" / "b.txt"))
        assert is_error and text.startswith("ACCESS_DENIED: ") and "in other" not in text
        is_error, text = await call(client, "write_file", path="../other/new.txt", content="x")
        assert is_error and text.startswith("ACCESS_DENIED: ")
    assert not (tree / "srv" / "other" / "new.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_wider_client_root_does_not_widen_access(tree, mode):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(uri(tree)), mode=mode) as client:
        assert await allowed(client) == f"{tree / 'srv'} (read-write)"
        for outside in (tree / "beside.txt", tree / "away" / "c.txt"):
            is_error, text = await call(client, "read_file", path=str(outside))
            assert is_error and text.startswith("ACCESS_DENIED: "), text
        assert await call(client, "read_file", path="proj/a.txt") == (False, "in proj")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_disjoint_client_root_leaves_nothing_and_says_why(tree, mode):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(uri(tree / "away")), mode=mode) as client:
        for name, args in [("read_file", {"path": "proj/a.txt"}), ("read_file", {"path": str(tree / "away" / "c.txt")}),
                           ("list_directory", {"path": "."}), ("write_file", {"path": "n.txt", "content": "x"})]:
            is_error, text = await call(client, name, **args)
            assert is_error and text.startswith("ACCESS_DENIED: "), text
            assert "do not overlap" in text and str(tree / "away") in text and str(tree / "srv") in text
        listed = await allowed(client)
        assert "do not overlap" in listed and str(tree / "srv") + " (" not in listed
    assert not (tree / "srv" / "n.txt").exists() and not (tree / "away" / "n.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_client_root_keeps_the_read_only_flag_of_the_operator_root(tree, mode):
    host = host_for([f"{tree / 'srv'}:ro"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(uri(tree / "srv" / "proj")), mode=mode) as client:
        assert await allowed(client) == f"{tree / 'srv' / 'proj'} (read-only)"
        is_error, text = await call(client, "write_file", path="a.txt", content="changed")
        assert is_error and text.startswith("READ_ONLY: "), text
    assert (tree / "srv" / "proj" / "a.txt").read_text() == "in proj"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the test client sends a non-file:// root
async def test_a_malformed_root_is_refused_alone(tree, mode, caplog):
    bad = ["https://example.com/srv", f"file://elsewhere{tree / 'srv'}", uri(tree / "srv" / "missing"), uri(tree / "srv" / "proj" / "a.txt")]
    host = host_for([tree / "srv"], PLUGINS)
    with caplog.at_level(logging.WARNING, logger="fsmcp"):
        async with connect(host, list_roots_callback=Roots(*bad, uri(tree / "srv" / "proj")), mode=mode) as client:
            assert await allowed(client) == f"{tree / 'srv' / 'proj'} (read-write)"
            assert await call(client, "read_file", path="a.txt") == (False, "in proj")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for root in bad:
        assert f"client root {root!r} refused" in logged


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
async def test_only_malformed_roots_leave_nothing(tree, mode):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots("https://example.com/"), mode=mode) as client:
        is_error, text = await call(client, "read_file", path="proj/a.txt")
    assert is_error and text.startswith("ACCESS_DENIED: ") and "usable file:// directory" in text


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_roots_changes_nothing(tree, mode):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, mode=mode) as client:
        assert await allowed(client) == f"{tree / 'srv'} (read-write)"
        assert await call(client, "read_file", path="other/b.txt") == (False, "in other")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_an_empty_roots_list_narrows_nothing(tree, mode):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(), mode=mode) as client:
        assert await allowed(client) == f"{tree / 'srv'} (read-write)"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_roots_are_asked_once_per_connection(tree, mode):
    roots = Roots(uri(tree / "srv" / "proj"))
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=roots, mode=mode) as client:
        for _ in range(3):
            assert await call(client, "read_file", path="a.txt") == (False, "in proj")
    assert roots.asked == 1


@pytest.mark.anyio
async def test_roots_list_changed_takes_effect_on_the_next_call(tree):
    roots = Roots(uri(tree / "srv" / "proj"))
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=roots, mode="legacy") as client:
        assert await call(client, "read_file", path="a.txt") == (False, "in proj")
        roots.uris = [uri(tree / "srv" / "other")]
        await roots_changed(client)
        assert await call(client, "read_file", path="b.txt") == (False, "in other")
        is_error, text = await call(client, "read_file", path=str(tree / "srv" / "proj" / "a.txt"))
        assert is_error and text.startswith("ACCESS_DENIED: ")
        roots.uris = [uri(tree / "away")]
        await roots_changed(client)
        is_error, text = await call(client, "read_file", path="b.txt")
        assert is_error and "do not overlap" in text
        roots.uris = [uri(tree)]
        await roots_changed(client)
        assert await allowed(client) == f"{tree / 'srv'} (read-write)"
    assert roots.asked == 4


class Flaky(Roots):
    """Fails its first roots/list, as a client with a bug or a slow start might."""

    async def __call__(self, ctx) -> types.ListRootsResult | types.ErrorData:
        if not self.asked:
            self.asked += 1
            return types.ErrorData(code=types.INTERNAL_ERROR, message="not ready")
        return await super().__call__(ctx)


@pytest.mark.anyio
async def test_a_failed_roots_list_refuses_the_call_and_is_asked_again(tree):
    roots = Flaky(uri(tree / "srv" / "proj"))
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=roots, mode="legacy") as client:
        is_error, text = await call(client, "read_file", path="other/b.txt")
        assert is_error and text.startswith("ACCESS_DENIED: ") and "roots/list failed" in text
        assert await call(client, "read_file", path="a.txt") == (False, "in proj")
    assert roots.asked == 2


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_set_workspace_stays_inside_the_client_roots(tree, mode):
    (tree / "srv" / "proj" / "sub").mkdir()
    (tree / "srv" / "proj" / "sub" / "d.txt").write_text("deeper")
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(uri(tree / "srv" / "proj")), mode=mode) as client:
        is_error, text = await call(client, "set_workspace", path=str(tree / "srv" / "other"))
        assert is_error and text.startswith("ACCESS_DENIED: ")
        assert await call(client, "set_workspace", path="sub") == (False, f"Successfully set workspace root to: {tree / 'srv' / 'proj' / 'sub'}")
        assert await call(client, "read_file", path="d.txt") == (False, "deeper")


@pytest.mark.anyio
async def test_each_connection_has_its_own_roots_and_workspace(tree):
    host = host_for([tree / "srv"], PLUGINS)
    async with connect(host, list_roots_callback=Roots(uri(tree / "srv" / "proj"))) as narrowed:
        async with connect(host, mode="legacy") as plain:
            assert await call(plain, "set_workspace", path="other") == (False, f"Successfully set workspace root to: {tree / 'srv' / 'other'}")
            assert await allowed(narrowed) == f"{tree / 'srv' / 'proj'} (read-write)"
            assert await call(narrowed, "read_file", path="a.txt") == (False, "in proj")
            assert await allowed(plain) == f"{tree / 'srv'} (read-write)"
            assert await call(plain, "read_file", path="b.txt") == (False, "in other")
    assert host.roots.roots == host.roots.operator  # nothing leaked into calls outside a connection


# -- over the real server, stdio -----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_client_roots_over_stdio(tree, mode):
    roots = Roots(uri(tree / "srv" / "proj"), uri(tree))
    async with serve_stdio(str(tree / "srv"), "--enable", "read", mode=mode, list_roots_callback=roots) as client:
        assert await allowed(client) == f"{tree / 'srv' / 'proj'} (read-write)\n{tree / 'srv'} (read-write)"
        assert await call(client, "read_file", path="a.txt") == (False, "in proj")
        is_error, text = await call(client, "read_file", path=str(tree / "beside.txt"))
        assert is_error and text.startswith("ACCESS_DENIED: ")
        if mode == "legacy":
            roots.uris = [uri(tree / "srv" / "other")]
            await roots_changed(client)
            assert await allowed(client) == f"{tree / 'srv' / 'other'} (read-write)"


# -- the intersection itself ---------------------------------------------------------------------


def narrowed(roots: RootSet, *paths: Path | str) -> list[tuple[Path, bool]]:
    view = roots.new_view()
    assert roots.narrow(view, [p if isinstance(p, str) else uri(p) for p in paths]) == []
    return [(r.path, r.read_only) for r in view.roots]


def test_intersection_with_nested_operator_roots(tree):
    srv, proj = tree / "srv", tree / "srv" / "proj"
    roots = RootSet([Root(srv), Root(proj, read_only=True)])
    assert narrowed(roots, tree) == [(srv, False), (proj, True)]
    assert narrowed(roots, srv) == [(srv, False), (proj, True)]
    (proj / "deep").mkdir()
    assert narrowed(roots, proj / "deep") == [(proj / "deep", True)]
    assert narrowed(roots, srv / "other", tree / "away") == [(srv / "other", False)]
    assert narrowed(roots, tree / "away") == []


def test_a_client_root_is_compared_by_real_path(tree):
    (tree / "link_to_srv").symlink_to(tree / "srv")
    (tree / "srv-evil").mkdir()
    roots = RootSet([Root(tree / "srv")])
    assert narrowed(roots, tree / "link_to_srv" / "proj") == [(tree / "srv" / "proj", False)]
    assert narrowed(roots, tree / "srv-evil") == []


def test_a_narrowed_view_confines_like_the_roots(tree):
    roots = RootSet([Root(tree / "srv")])
    view = roots.new_view()
    roots.narrow(view, [uri(tree / "srv" / "proj")])
    with roots.viewing(view):
        assert roots.confine("a.txt", Access.READ).path == tree / "srv" / "proj" / "a.txt"
        with pytest.raises(ToolError) as info:
            roots.confine("../other/b.txt", Access.READ)
        assert info.value.code is ErrorCode.ACCESS_DENIED
    assert roots.confine("other/b.txt", Access.READ).path == tree / "srv" / "other" / "b.txt"


@pytest.mark.parametrize(
    "raw, why",
    [
        ("https://example.com/x", "only file://"),
        ("file://server/share", "another host"),
        ("file:///tmp/x?query=1", "no query"),
        ("file:relative", "not an absolute path"),
        ("file:///tmp/%00", "NUL byte"),
        ("file:///nowhere/%ff", "not an existing directory"),
        (42, "must be a string"),
    ],
)
def test_root_uris_that_are_refused(raw, why):
    with pytest.raises(ValueError, match=why):
        root_path(raw)


def test_root_uris_that_are_taken(tree):
    spaced = tree / "with space"
    spaced.mkdir()
    assert root_path(uri(spaced)) == spaced
    assert root_path("file://localhost" + str(tree)) == tree
