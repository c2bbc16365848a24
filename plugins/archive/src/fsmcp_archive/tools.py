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
        "Create a zip or tar archive (tar, tar.gz, tar.bz2, tar.xz) from files, directories and globs. A directory is "
        "stored with everything in it under its own name (src -> src/...); empty directories, file modes, non-ASCII "
        "names and links (as links) are kept. The archive appears whole or not at all; an existing output is an error "
        "unless overwrite: true.",
        CompressInput,
        compress_files,
        OVERWRITES,
        title="Create archive",
    ),
    Tool(
        "extract_archive",
        "Extract a zip or tar archive (plain, gzip, bzip2, xz; recognised by content) into a directory. Every member is "
        "checked first: names or links that would land outside the destination, devices, and archives past the size, "
        "member-count or compression-ratio limits are refused, and then nothing is written. Existing files are an "
        "error unless overwrite: true; existing directories are merged. A failed extraction leaves the destination as "
        "it was.",
        ExtractInput,
        extract_archive,
        OVERWRITES,
        title="Extract archive",
    ),
    Tool(
        "list_archive",
        "List a zip or tar archive's members: type, mode, size, name and link target, one per line, after a summary "
        "line with the totals. Members extract_archive would refuse are marked. Long listings continue with offset.",
        ListInput,
        list_archive,
        READ_ONLY,
        title="List archive",
    ),
]
