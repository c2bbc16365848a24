"""outline and read_symbol through the real server (``fsmcp serve`` over stdio), found by their entry point."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

PY = textwrap.dedent(
    '''\
    """A module."""
    import functools


    def top(a, b: int = 1, *rest, key=None) -> str:
        def inner():
            pass
        return str(a)


    @functools.total_ordering
    class Shape(object):
        """A shape."""

        class Unit:
            pass

        @property
        def area(self) -> float:
            return 0.0

        async def grow(self, by):
            return by


    if sys.version_info >= (3, 11):
        def modern():
            return 1
    '''
)

TS = textwrap.dedent(
    """\
    export interface Point {
      x: number;
      y: number;
    }

    export class Plot<T> extends Base {
      constructor(private readonly points: Point[]) {
        super();
      }

      draw(scale: number): void {
        console.log(scale);
      }
    }

    export const area = (p: Point): number => p.x * p.y;

    type Id = string;

    function helper(id: Id) {
      return id;
    }
    """
)

GO = textwrap.dedent(
    """\
    package main

    type Server struct {
    \tname string
    }

    func (s *Server) Close() error {
    \treturn nil
    }

    func main() {
    \ts := &Server{}
    \t_ = s.Close()
    }
    """
)

MD = textwrap.dedent(
    """\
    # Title

    intro

    ## Install

    ```sh
    # not a heading
    pip install x
    ```

    ## Use

    ### Details

    text
    """
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "mod.py").write_text(PY)
    (root / "plot.ts").write_text(TS)
    (root / "main.go").write_text(GO)
    (root / "README.md").write_text(MD)
    (root / "data.bin").write_bytes(b"\x00\x01")
    (root / "broken.py").write_text("def f(:\n")
    return root


async def test_outline_python_markdown_typescript_go(root):
    async with serve_stdio(str(root), "--enable", "outline") as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"outline", "read_symbol"}
        py = text_of(await client.call_tool("outline", {"path": "mod.py"}))
        shallow = text_of(await client.call_tool("outline", {"path": "mod.py", "depth": 1}))
        several = await client.call_tool("outline", {"path": ["README.md", "plot.ts", "main.go", "data.bin"]})
    assert py.splitlines() == [
        f"{root / 'mod.py'} (python, 28 lines, 6 definitions)",
        "5-8 def top(a, b: int=1, *rest, key=None) -> str",
        "11-23 @functools.total_ordering class Shape(object)",
        "  15-16 class Unit",
        "  18-20 @property def area(self) -> float",
        "  22-23 async def grow(self, by)",
        "27-28 def modern()",
    ]
    assert "deeper not shown" in shallow.splitlines()[0] and "  " not in "".join(shallow.splitlines()[1:])
    assert not several.is_error
    text = text_of(several)
    assert "(markdown, 16 lines, 4 definitions)\n1-16 # Title\n  5-11 ## Install\n  12-16 ## Use\n    14-16 ### Details" in text
    assert "not a heading" not in text
    assert "1-4 interface Point\n6-14 class Plot<T> extends Base\n  7-9 constructor(private readonly points: Point[])" in text
    assert "  11-13 draw(scale: number): void" in text
    assert "16-16 area = (p: Point): number" in text
    assert "18-18 type Id = string" in text and "20-22 function helper(id: Id)" in text
    assert "3-5 type Server struct\n" in text
    assert "7-9 func (s *Server) Close() error" in text and "11-14 func main()" in text
    assert f"{root / 'data.bin'}: INVALID_PARAMS: " in text and "known languages: c, cpp, csharp, go, java, javascript, kotlin, markdown, php, python, ruby, rust, shell, tsx, typescript" in text


async def test_read_symbol_round_trips_with_edit_file(root):
    async with serve_stdio(str(root), "--enable", "outline,edit,read") as client:
        method = text_of(await client.call_tool("read_symbol", {"path": "mod.py", "name": "Shape.grow"}))
        go = text_of(await client.call_tool("read_symbol", {"path": "main.go", "name": "Server.Close"}))
        ts = text_of(await client.call_tool("read_symbol", {"path": "plot.ts", "name": "Plot.draw"}))
        head, *body = method.splitlines()
        start, end = (int(n) for n in head.split(" lines ")[1].split(" ")[0].split("-"))
        edited = await client.call_tool(
            "edit_file",
            {"path": "mod.py", "edits": [{"oldText": "return by", "newText": "return by * 2", "startLine": start, "endLine": end}]},
        )
        again = text_of(await client.call_tool("read_symbol", {"path": "mod.py", "name": "grow"}))
        missing = await client.call_tool("read_symbol", {"path": "mod.py", "name": "Shape.shrink"})
        broken = await client.call_tool("outline", {"path": "broken.py"})
    assert head == f"{root / 'mod.py'} lines 22-23 (method Shape.grow)"
    assert body == PY.splitlines()[21:23]
    assert go.splitlines()[1:] == GO.splitlines()[6:9]
    assert ts.splitlines()[1:] == TS.splitlines()[10:13]
    assert not edited.is_error, text_of(edited)
    assert again.splitlines()[1:] == ["    async def grow(self, by):", "        return by * 2"]
    assert missing.is_error and text_of(missing).startswith("NOT_FOUND: ") and "Shape.grow" in text_of(missing)
    assert broken.is_error and text_of(broken).startswith("INVALID_PARAMS: ") and "line 1" in text_of(broken)


async def test_outline_of_an_installed_package_is_a_small_fraction(tmp_path):
    import pydantic

    source = Path(pydantic.__file__).parent / "main.py"
    async with serve_stdio(str(source.parent), "--enable", "outline") as client:
        result = await client.call_tool("outline", {"path": str(source)})
        model = await client.call_tool("read_symbol", {"path": str(source), "name": "BaseModel.model_dump"})
    text = text_of(result)
    assert not result.is_error and "class BaseModel" in text
    assert len(text) < source.stat().st_size / 5
    head, *body = text_of(model).splitlines()
    assert body[-1].strip() and "def model_dump(" in "\n".join(body[:3])


async def test_a_long_decorator_call_leaves_the_name_in_the_signature(root):
    (root / "deco.py").write_text(
        "@deprecated(\n    'a long message that explains at length what to use instead of this function',\n    category=DeprecationWarning,\n)\n"
        "def old_function_with_a_long_name(self, a, b):\n    pass\n"
    )
    async with serve_stdio(str(root), "--enable", "outline") as client:
        text = text_of(await client.call_tool("outline", {"path": "deco.py"}))
    assert text.splitlines()[1] == "1-6 @deprecated(…) def old_function_with_a_long_name(self, a, b)"
