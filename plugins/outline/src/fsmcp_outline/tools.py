"""The outline family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import READ_ONLY, Tool

from .models import OutlineInput, ReadSymbolInput

TOOLS = [
    Tool(
        "outline",
        "Map source files before reading: classes, functions, methods (Markdown: headings) with line ranges and "
        "signatures. Python, Markdown; with grammars: JS/TS, Go, Rust, C/C++, Java, C#, Kotlin, Ruby, PHP, shell.",
        OutlineInput,
        "fsmcp_outline.outline:outline",
        READ_ONLY,
        title="Outline source files",
    ),
    Tool(
        "read_symbol",
        "The source of one definition outline lists, with its line range.",
        ReadSymbolInput,
        "fsmcp_outline.read_symbol:read_symbol",
        READ_ONLY,
        title="Read one definition",
    ),
]
