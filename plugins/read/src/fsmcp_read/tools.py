"""The read plugin's tools, as the host registers them."""

from fsmcp import READ_ONLY, Tool

from .models import (
    AllowedDirectoriesOutput,
    DirectoryTreeInput,
    FileInfoOutput,
    ListDirectoryInput,
    NoInput,
    PathInput,
    ReadFileInput,
    ReadMultipleInput,
)

TOOLS = [
    Tool(
        "read_file",
        "Read a file or a range of its lines or bytes; binary files as image/blob content.",
        ReadFileInput,
        "fsmcp_read.read_file:read_file",
        READ_ONLY,
        quick=True,
    ),
    Tool(
        "read_multiple_files",
        "Read several files at once, sharing the output budget; one that fails is shown inline.",
        ReadMultipleInput,
        "fsmcp_read.read_multiple_files:read_multiple_files",
        READ_ONLY,
        quick=True,
    ),
    Tool(
        "list_directory",
        "A directory's entries by name, marked file, directory or link (with its target).",
        ListDirectoryInput,
        "fsmcp_read.list_directory:list_directory",
        READ_ONLY,
    ),
    Tool(
        "directory_tree",
        "A directory's tree as JSON {name, type, children}; past the output budget, cut directories are "
        "marked \"truncated\".",
        DirectoryTreeInput,
        "fsmcp_read.directory_tree:directory_tree",
        READ_ONLY,
    ),
    Tool(
        "get_file_info",
        "Metadata of a file, directory or link (not its target), with the version expectedVersion takes.",
        PathInput,
        "fsmcp_read.get_file_info:get_file_info",
        READ_ONLY,
        quick=True,
        output_model=FileInfoOutput,
    ),
    Tool(
        "list_allowed_directories",
        "The directories tools may access; relative paths start at the workspace.",
        NoInput,
        "fsmcp_read.list_allowed_directories:list_allowed_directories",
        READ_ONLY,
        output_model=AllowedDirectoriesOutput,
    ),
]
