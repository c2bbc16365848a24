"""Outlines of the languages teams use, React's component shapes, and read_symbol by a method's bare name.

Each sample is shaped like real code, its definitions at known lines; the server is the real
one over stdio.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsmcp.testing import serve_stdio, text_of

pytestmark = pytest.mark.anyio

RS = '''\
use std::fmt;

/// A server.
#[derive(Debug, Clone)]
pub struct Server {
    name: String,
}

impl Server {
    pub fn new(name: &str) -> Self {
        Server { name: name.to_string() }
    }

    fn run(&self) {}
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

pub trait Handler {
    fn handle(&self, req: &str) -> bool;
}

pub enum State { On, Off }

mod inner {
    pub fn helper() {}
}

macro_rules! square { ($x:expr) => { $x * $x }; }

type Id = u64;

impl<'a> Handler for &'a mut Server {
    fn handle(&self, req: &str) -> bool { true }
}
'''

C = '''\
#include <stdio.h>

struct point {
    int x, y;
};

typedef struct {
    int w;
} size_t2;

enum color { RED, GREEN };

static int add(int a, int b)
{
    return a + b;
}

char *name_of(struct point *p) {
    return "p";
}

int main(void);

#define MAX(a, b) ((a) > (b) ? (a) : (b))
'''

CPP = '''\
#include <string>

namespace geo {

class Shape {
public:
    Shape();
    virtual ~Shape() = default;
    double area() const { return 0; }
    template <typename T> T scaled(T by) { return by; }
};

struct Point { int x; };

double Shape::area2() const {
    return 1;
}

Shape::Shape() {}

template <typename T>
T twice(T v) { return v * 2; }

}  // namespace geo

int main() { return 0; }

bool operator==(const geo::Point &a, const geo::Point &b) { return a.x == b.x; }
'''

JAVA = '''\
package demo;

import java.util.List;

@Deprecated
public class Shape implements Comparable<Shape> {
    private int size;

    public Shape(int size) {
        this.size = size;
    }

    @Override
    public int compareTo(Shape other) {
        return 0;
    }

    static class Unit {
        void run() {}
    }

    interface Visitor {
        void visit(Shape s);
    }
}

enum Color {
    RED;
    Color next() { return RED; }
}

record Pair(int a, int b) {}
'''

CS = '''\
using System;

namespace Demo
{
    [Serializable]
    public class Shape : IComparable
    {
        public int Size { get; set; }

        public Shape(int size)
        {
            Size = size;
        }

        public int CompareTo(object other)
        {
            return 0;
        }
    }

    public interface IVisitor
    {
        void Visit(Shape s);
    }

    public struct Point { public int X; }

    public enum Color { Red }

    public record Pair(int A, int B);
}
'''

CS_FLAT = '''\
namespace Demo.Flat;

public class Runner
{
    public void Run() { }
}
'''

KT = '''\
package demo

import kotlin.math.max

data class Point(val x: Int, val y: Int)

class Shape(val size: Int) : Comparable<Shape> {
    override fun compareTo(other: Shape): Int {
        return 0
    }

    companion object {
        fun unit(): Shape = Shape(1)
    }
}

interface Visitor {
    fun visit(s: Shape)
}

object Registry {
    fun register() {}
}

fun top(a: Int): Int {
    return a
}

enum class Color { RED }

typealias Id = String

fun String.shout(): String = uppercase()
'''

RB = '''\
require "json"

module Geo
  class Shape < Base
    attr_reader :size

    def initialize(size) # :nodoc:
      @size = size
    end

    def self.unit
      new(1)
    end

    class << self
      def build; end
    end
  end
end

class Geo::Point
  def to_s = "p"
end

def top(a)
  a
end
'''

PHP = '''\
<?php

namespace App\\Geo;

use Foo\\Bar;

#[Attribute]
final class Shape extends Base implements Countable
{
    private int $size;

    public function __construct(int $size)
    {
        $this->size = $size;
    }

    public static function unit(): self
    {
        return new self(1);
    }
}

interface Visitor
{
    public function visit(Shape $s): void;
}

trait Sizable
{
    public function size(): int { return 0; }
}

enum Suit: string
{
    case Hearts = 'H';
    public function color(): string { return 'Red'; }
}

function top($a)
{
    return $a;
}
'''

SH = '''\
#!/bin/sh
set -e

usage() {
    echo "usage"
}

function build {
    make all
}

main() (
    usage
)

main "$@"
'''

TSX = '''\
import React, { forwardRef, memo } from "react";

type Props = { value: string };

export const Editor = React.forwardRef(function Editor(props: Props, ref) {
  const onKey = () => {};
  return <div ref={ref}>{props.value}</div>;
});

const Row = memo(({ value }: Props) => <span>{value}</span>);

export const List: React.FC<Props> = (props) => {
  return <ul />;
};

var Walker = class {
  walk(node) {
    return node;
  }
};

export default function App() {
  return <Editor value="x" />;
}
'''

JSX = '''\
export default memo(function Panel() {
  return null;
});
'''

JS_CLASS = '''\
export default class {
  run() {}
  count = 0;
  handle = (e) => {
    return e;
  };
}
'''

GO = '''\
package main

type Client struct{}

func (c *Client) Run(ctx context.Context) error {
\treturn nil
}

func (c *Client) Close() {}
'''

INITS = '''\
class A:
    def __init__(self):
        self.a = 1


class B:
    def __init__(self):
        self.b = 2

    class C:
        def __init__(self):
            self.c = 3
'''

# file -> (language, the outline's lines after its head)
OUTLINES = {
    "a.rs": ("rust", [
        "4-7 pub struct Server",
        "9-15 impl Server",
        "  10-12 pub fn new(name: &str) -> Self",
        "  14-14 fn run(&self)",
        "17-21 impl fmt::Display for Server",
        "  18-20 fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result",
        "23-25 pub trait Handler",
        "  24-24 fn handle(&self, req: &str) -> bool",
        "27-27 pub enum State",
        "29-31 mod inner",
        "  30-30 pub fn helper()",
        "33-33 macro_rules! square",
        "35-35 type Id = u64",
        "37-39 impl<'a> Handler for &'a mut Server",
        "  38-38 fn handle(&self, req: &str) -> bool",
    ]),
    "a.c": ("c", [
        "3-5 struct point",
        "7-9 typedef struct {…} size_t2",
        "11-11 enum color",
        "13-16 static int add(int a, int b)",
        "18-20 char *name_of(struct point *p)",
        "22-22 int main(void)",
        "24-24 #define MAX(a, b)",
    ]),
    "a.cpp": ("cpp", [
        "3-24 namespace geo",
        "  5-11 class Shape",
        "    7-7 Shape()",
        "    8-8 virtual ~Shape() = default",
        "    9-9 double area() const",
        "    10-10 T scaled(T by)",
        "  13-13 struct Point",
        "  15-17 double Shape::area2() const",
        "  19-19 Shape::Shape()",
        "  21-22 T twice(T v)",
        "26-26 int main()",
        "28-28 bool operator==(const geo::Point &a, const geo::Point &b)",
    ]),
    "A.java": ("java", [
        "5-25 @Deprecated public class Shape implements Comparable<Shape>",
        "  9-11 public Shape(int size)",
        "  13-16 @Override public int compareTo(Shape other)",
        "  18-20 static class Unit",
        "    19-19 void run()",
        "  22-24 interface Visitor",
        "    23-23 void visit(Shape s)",
        "27-30 enum Color",
        "  29-29 Color next()",
        "32-32 record Pair(int a, int b)",
    ]),
    "a.cs": ("csharp", [
        "3-31 namespace Demo",
        "  5-19 [Serializable] public class Shape : IComparable",
        "    8-8 public int Size",
        "    10-13 public Shape(int size)",
        "    15-18 public int CompareTo(object other)",
        "  21-24 public interface IVisitor",
        "    23-23 void Visit(Shape s)",
        "  26-26 public struct Point",
        "  28-28 public enum Color",
        "  30-30 public record Pair(int A, int B)",
    ]),
    "b.cs": ("csharp", ["3-6 public class Runner", "  5-5 public void Run()"]),
    "a.kt": ("kotlin", [
        "5-5 data class Point(val x: Int, val y: Int)",
        "7-15 class Shape(val size: Int) : Comparable<Shape>",
        "  8-10 override fun compareTo(other: Shape): Int",
        "  12-14 companion object",
        "    13-13 fun unit(): Shape",
        "17-19 interface Visitor",
        "  18-18 fun visit(s: Shape)",
        "21-23 object Registry",
        "  22-22 fun register()",
        "25-27 fun top(a: Int): Int",
        "29-29 enum class Color",
        "31-31 typealias Id = String",
        "33-33 fun String.shout(): String",
    ]),
    "a.rb": ("ruby", [
        "3-19 module Geo",
        "  4-18 class Shape < Base",
        "    7-9 def initialize(size)",
        "    11-13 def self.unit",
        "    16-16 def build",
        "21-23 class Geo::Point",
        "  22-22 def to_s",
        "25-27 def top(a)",
    ]),
    "a.php": ("php", [
        "7-21 #[Attribute] final class Shape extends Base implements Countable",
        "  12-15 public function __construct(int $size)",
        "  17-20 public static function unit(): self",
        "23-26 interface Visitor",
        "  25-25 public function visit(Shape $s): void",
        "28-31 trait Sizable",
        "  30-30 public function size(): int",
        "33-37 enum Suit: string",
        "  36-36 public function color(): string",
        "39-42 function top($a)",
    ]),
    "a.sh": ("shell", ["4-6 usage()", "8-10 function build", "12-14 main()"]),
    "a.tsx": ("tsx", [
        "3-3 type Props",
        "5-8 Editor = React.forwardRef(function Editor(props: Props, ref)",
        "10-10 Row = memo(({ value }: Props)",
        "12-14 List: React.FC<Props> = (props)",
        "16-20 Walker = class",
        "  17-19 walk(node)",
        "22-24 function App()",
    ]),
    "b.jsx": ("javascript", ["1-3 export default memo(function Panel()"]),
    "c.js": ("javascript", ["1-7 export default class", "  2-2 run()", "  4-6 handle = (e)"]),
}

# file -> (a bare name, the lines its one definition spans, its full name)
BARE = {
    "a.rs": ("fmt", (18, 20), "Server.fmt"),
    "a.c": ("add", (13, 16), "add"),
    "a.cpp": ("area2", (15, 17), "geo.Shape.area2"),
    "A.java": ("compareTo", (13, 16), "Shape.compareTo"),
    "a.cs": ("CompareTo", (15, 18), "Demo.Shape.CompareTo"),
    "a.kt": ("unit", (13, 13), "Shape.Companion.unit"),
    "a.rb": ("initialize", (7, 9), "Geo.Shape.initialize"),
    "a.php": ("__construct", (12, 15), "Shape.__construct"),
    "a.sh": ("build", (8, 10), "build"),
    "a.tsx": ("Editor", (5, 8), "Editor"),
    "main.go": ("Run", (5, 7), "Client.Run"),
}

SOURCES = {
    "a.rs": RS, "a.c": C, "a.cpp": CPP, "A.java": JAVA, "a.cs": CS, "b.cs": CS_FLAT, "a.kt": KT, "a.rb": RB,
    "a.php": PHP, "a.sh": SH, "a.tsx": TSX, "b.jsx": JSX, "c.js": JS_CLASS, "main.go": GO, "inits.py": INITS,
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    for name, text in SOURCES.items():
        (root / name).write_text(text)
    return root


async def test_outline_of_each_language(root):
    async with serve_stdio(str(root), "--enable", "outline") as client:
        results = {name: await client.call_tool("outline", {"path": name}) for name in OUTLINES}
    for name, (language, lines) in OUTLINES.items():
        result = results[name]
        assert not result.is_error, (name, text_of(result))
        head, *body = text_of(result).splitlines()
        total = len(SOURCES[name].splitlines())
        assert head == f"{root / name} ({language}, {total} lines, {len(lines)} definitions)", (name, text_of(result))
        assert body == lines, (name, text_of(result))


async def test_read_symbol_by_a_bare_name_in_each_language(root):
    async with serve_stdio(str(root), "--enable", "outline") as client:
        results = {name: await client.call_tool("read_symbol", {"path": name, "name": bare}) for name, (bare, _, _) in BARE.items()}
        # the full name, and its parts from the end, find the same definition
        suffix = text_of(await client.call_tool("read_symbol", {"path": "a.cpp", "name": "Shape::area2"}))
        rust_impl = text_of(await client.call_tool("read_symbol", {"path": "a.rs", "name": "Server.handle"}))
        kotlin_interface = text_of(await client.call_tool("read_symbol", {"path": "a.kt", "name": "Visitor"}))
    for name, (bare, (start, end), full) in BARE.items():
        result = results[name]
        assert not result.is_error, (name, text_of(result))
        head, *body = text_of(result).splitlines()
        assert head.startswith(f"{root / name} lines {start}-{end} (") and head.endswith(f" {full})"), (name, head)
        assert body == SOURCES[name].splitlines()[start - 1 : end], name
    assert suffix.splitlines()[0] == f"{root / 'a.cpp'} lines 15-17 (function geo.Shape.area2)"
    assert rust_impl.splitlines()[0] == f"{root / 'a.rs'} lines 38-38 (method Server.handle)"
    assert kotlin_interface.splitlines()[0] == f"{root / 'a.kt'} lines 17-19 (interface Visitor)"


async def test_several_matches_are_a_list_to_choose_from(root):
    async with serve_stdio(str(root), "--enable", "outline") as client:
        inits = await client.call_tool("read_symbol", {"path": "inits.py", "name": "__init__"})
        one = await client.call_tool("read_symbol", {"path": "inits.py", "name": "B.C.__init__"})
        shapes = await client.call_tool("read_symbol", {"path": "a.cpp", "name": "Shape"})
        missing = await client.call_tool("read_symbol", {"path": "a.cpp", "name": "Shape::perimeter"})
    assert not inits.is_error, text_of(inits)
    assert text_of(inits).splitlines() == [
        f"{root / 'inits.py'}: 3 definitions named '__init__'; pass one's full name as name:",
        "2-3 method A.__init__",
        "7-8 method B.__init__",
        "11-12 method B.C.__init__",
    ]
    assert text_of(one).splitlines()[1:] == INITS.splitlines()[10:12]
    # a class, its constructor's declaration and its definition: three to choose from, no body
    assert text_of(shapes).splitlines()[1:] == ["5-11 class geo.Shape", "7-7 method geo.Shape.Shape", "19-19 function geo.Shape.Shape"]
    # nothing of that name: the members of the type named, found by its last part as well
    assert missing.is_error and text_of(missing).endswith(
        "no definition named 'Shape::perimeter'; similar: geo.Shape.Shape, geo.Shape.~Shape, geo.Shape.area, geo.Shape.scaled, "
        "geo.Shape.area2"
    ), text_of(missing)


async def test_real_c_files_from_installed_packages(tmp_path):
    """Each grammar wheel's own binding.c, and the interpreter's object.h (read as C++)."""
    import importlib.util
    import sysconfig

    binding = Path(importlib.util.find_spec("tree_sitter_go").origin).parent / "binding.c"
    header = Path(sysconfig.get_paths()["include"]) / "object.h"
    lines = binding.read_text().splitlines()
    init = next(i for i, line in enumerate(lines, 1) if line.startswith("PyMODINIT_FUNC PyInit__binding"))
    heads = header.read_text().splitlines()
    struct = heads.index("struct _object {") + 1
    struct_end = heads.index("};", struct) + 1
    async with serve_stdio(str(binding.parent), str(header.parent), "--enable", "outline") as client:
        outline = text_of(await client.call_tool("outline", {"path": str(binding)}))
        body = text_of(await client.call_tool("read_symbol", {"path": str(binding), "name": "PyInit__binding"}))
        objects = text_of(await client.call_tool("outline", {"path": str(header), "depth": 1}))
        object_struct = text_of(await client.call_tool("read_symbol", {"path": str(header), "name": "_object"}))
    # after `slots[]`, whose initializer holds an #ifdef the grammar cannot place
    assert f"{init}-{init + 2} PyMODINIT_FUNC PyInit__binding(void)" in outline.splitlines()
    assert body.splitlines()[1:] == lines[init - 1 : init + 2]
    assert f"{struct}-{struct_end} struct _object" in objects.splitlines()
    assert object_struct.splitlines()[1:] == heads[struct - 1 : struct_end]


async def test_nesting_deeper_than_pythons_recursion_limit_is_outlined(root):
    (root / "deep.js").write_text("{" * 5000 + "function f() {}" + "}" * 5000 + "\n")
    (root / "deep.c").write_text("#ifdef X\n" * 3000 + "int f(void) { return 0; }\n" + "#endif\n" * 3000)
    (root / "deep.rb").write_text("module A\n" * 2000 + "end\n" * 2000)
    async with serve_stdio(str(root), "--enable", "outline") as client:
        js = await client.call_tool("outline", {"path": "deep.js"})
        c = await client.call_tool("outline", {"path": "deep.c"})
        rb = await client.call_tool("outline", {"path": "deep.rb", "depth": 1})
    assert not js.is_error and "1-1 function f()" in text_of(js).splitlines(), text_of(js)[:300]
    assert not c.is_error and "3001-3001 int f(void)" in text_of(c).splitlines(), text_of(c)[:300]
    assert not rb.is_error and text_of(rb).splitlines()[1:] == ["1-4000 module A"], text_of(rb)[:300]


async def test_a_script_without_an_extension_is_known_by_its_shebang(root):
    (root / "deploy").write_text("#!/usr/bin/env bash\nset -e\n\nbuild() {\n    make\n}\n")
    (root / "manage").write_text("#!/usr/bin/python3\ndef main():\n    pass\n")
    (root / "notes").write_text("build() {\n}\n")
    async with serve_stdio(str(root), "--enable", "outline") as client:
        shell = text_of(await client.call_tool("outline", {"path": "deploy"}))
        python = text_of(await client.call_tool("outline", {"path": "manage"}))
        plain = await client.call_tool("outline", {"path": "notes"})
    assert shell.splitlines() == [f"{root / 'deploy'} (shell, 6 lines, 1 definitions)", "4-6 build()"]
    assert python.splitlines() == [f"{root / 'manage'} (python, 3 lines, 1 definitions)", "2-3 def main()"]
    assert plain.is_error and "no outline for a file without extension" in text_of(plain)


async def test_concurrent_outlines_of_one_language_keep_to_their_files(root):
    """One parser a language, shared by the worker threads: 60 rounds of four calls at once, no result mixed up."""
    import anyio

    (root / "other.rs").write_text(RS.replace("Server", "Client").replace("Handler", "Sink") * 3)
    async with serve_stdio(str(root), "--enable", "outline") as client:
        expected = {name: text_of(await client.call_tool("outline", {"path": name})) for name in ("a.rs", "other.rs")}
        mixed = 0
        for _ in range(60):
            got: list[tuple[str, str]] = []

            async def one(name: str) -> None:
                got.append((name, text_of(await client.call_tool("outline", {"path": name}))))

            async with anyio.create_task_group() as tasks:
                for name in ("a.rs", "other.rs", "a.rs", "other.rs"):
                    tasks.start_soon(one, name)
            mixed += sum(text != expected[name] for name, text in got)
    assert "Client" in expected["other.rs"] and "Client" not in expected["a.rs"]
    assert mixed == 0
