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
        "Read a file, whole or a range of lines or bytes: text as it is, images and other binary files as "
        "image/blob content with a mimeType. Past the output budget, a note says where to go on.",
        ReadFileInput,
        "fsmcp_read.read_file:read_file",
        READ_ONLY,
        title="Read file",
    ),
    Tool(
        "read_multiple_files",
        "Read several files in one call: '<path>:\\n<content>' each, a failure as '[error: CODE message]'; "
        "they share the output budget.",
        ReadMultipleInput,
        "fsmcp_read.multi:read_multiple_files",
        READ_ONLY,
        title="Read multiple files",
    ),
    Tool(
        "list_directory",
        "A directory's entries by name: '[FILE] name', '[DIR] name' or '[LINK] name -> target' lines.",
        ListDirectoryInput,
        "fsmcp_read.listing:list_directory",
        READ_ONLY,
        title="List directory",
    ),
    Tool(
        "directory_tree",
        "A directory's tree as compact JSON {name, type, children}; past the output budget, filled "
        "breadth-first, cut directories marked \"truncated\":true.",
        DirectoryTreeInput,
        "fsmcp_read.tree:directory_tree",
        READ_ONLY,
        title="Directory tree",
    ),
    Tool(
        "get_file_info",
        "Metadata of a file, directory or link (not its target): type, size, times (ISO-8601 UTC), octal "
        "permissions, a link's target, the version for expectedVersion.",
        PathInput,
        "fsmcp_read.info:get_file_info",
        READ_ONLY,
        title="Get file info",
        output_model=FileInfoOutput,
    ),
    Tool(
        "list_allowed_directories",
        "The directories this server may access, each (read-write) or (read-only). Tools take paths absolute "
        "or relative to the workspace.",
        NoInput,
        "fsmcp_read.info:list_allowed_directories",
        READ_ONLY,
        title="List allowed directories",
        output_model=AllowedDirectoriesOutput,
    ),
]
