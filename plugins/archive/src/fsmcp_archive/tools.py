"""The archive family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import OVERWRITES, READ_ONLY, Tool

from .models import CompressInput, ExtractInput, ListInput

# Each tool's module is imported at its first call, and with it the archive libraries (tarfile,
# zipfile, lzma, bz2), not when the server starts: start-up time is a feature.

TOOLS = [
    Tool(
        "compress_files",
        "Create a zip or tar archive, all or nothing, keeping empty directories, modes and links.",
        CompressInput,
        "fsmcp_archive.compress_files:compress_files",
        OVERWRITES,
        long=True,
    ),
    Tool(
        "extract_archive",
        "Extract a zip or tar archive (gzip, bzip2, xz too) into a directory, all or nothing; refuses members "
        "landing outside, devices and bombs.",
        ExtractInput,
        "fsmcp_archive.extract_archive:extract_archive",
        OVERWRITES,
        long=True,
    ),
    Tool(
        "list_archive",
        "A zip or tar archive's members and totals; what extract_archive refuses is marked.",
        ListInput,
        "fsmcp_archive.list_archive:list_archive",
        READ_ONLY,
    ),
]
