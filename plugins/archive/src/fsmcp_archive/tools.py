"""The archive family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import OVERWRITES, READ_ONLY, Tool, ToolContext, ToolResult

from .models import CompressInput, ExtractInput, ListInput

# The archive libraries (tarfile, zipfile, lzma, bz2) are imported on first use, not when the
# server starts: start-up time is a feature.


def compress_files(args: CompressInput, ctx: ToolContext) -> ToolResult:
    from .compress import compress_files

    return compress_files(args, ctx)


def extract_archive(args: ExtractInput, ctx: ToolContext) -> ToolResult:
    from .extract import extract_archive

    return extract_archive(args, ctx)


def list_archive(args: ListInput, ctx: ToolContext) -> ToolResult:
    from .listing import list_archive

    return list_archive(args, ctx)


TOOLS = [
    Tool(
        "compress_files",
        "Create a zip or tar archive, all or nothing, keeping empty directories, modes and links.",
        CompressInput,
        compress_files,
        OVERWRITES,
    ),
    Tool(
        "extract_archive",
        "Extract a zip or tar archive (gzip, bzip2, xz too) into a directory, all or nothing; refuses members "
        "landing outside, devices and bombs.",
        ExtractInput,
        extract_archive,
        OVERWRITES,
    ),
    Tool(
        "list_archive",
        "A zip or tar archive's members and totals; what extract_archive refuses is marked.",
        ListInput,
        list_archive,
        READ_ONLY,
    ),
]
