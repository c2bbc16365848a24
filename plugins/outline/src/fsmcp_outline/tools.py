"""The outline family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import READ_ONLY, Tool

from .models import OutlineInput, ReadSymbolInput

TOOLS = [
    Tool(
        "outline",
        "Map a source file before reading it: its classes, functions, methods (Markdown: headings) with line "
        "ranges and signatures, a small fraction of the file's size. Python and Markdown always; languages "
        "with an installed tree-sitter grammar too (an unknown file's entry names them).",
        OutlineInput,
        "fsmcp_outline.outline:outline",
        READ_ONLY,
        title="Outline source files",
    ),
    Tool(
        "read_symbol",
        "The source of one definition that outline lists, with its line range: read only what you need, then "
        "edit it through edit_file's startLine/endLine.",
        ReadSymbolInput,
        "fsmcp_outline.outline:read_symbol",
        READ_ONLY,
        title="Read one definition",
    ),
]
