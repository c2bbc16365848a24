"""The outline family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import READ_ONLY, Tool

from .models import OutlineInput, ReadSymbolInput

TOOLS = [
    Tool(
        "outline",
        "Map a source file before reading it: classes, functions, methods (Markdown: headings), with line ranges "
        "and signatures. Python, Markdown and languages with an installed tree-sitter grammar.",
        OutlineInput,
        "fsmcp_outline.outline:outline",
        READ_ONLY,
        title="Outline source files",
    ),
    Tool(
        "read_symbol",
        "The source of one definition outline lists, with its line range: read only what you need.",
        ReadSymbolInput,
        "fsmcp_outline.outline:read_symbol",
        READ_ONLY,
        title="Read one definition",
    ),
]
