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
        "Read a file, whole or a range of lines or bytes. Text comes as it is; images and other binary files as "
        "image/blob content with a mimeType. Output over the budget is cut, with a note saying where to go on.",
        ReadFileInput,
        "fsmcp_read.read_file:read_file",
        READ_ONLY,
        title="Read file",
    ),
    Tool(
        "read_multiple_files",
        "Read several files in one call: a '<path>:\\n<content>' item each; a failure shows inline as "
        "'[error: CODE message]'. They share the output budget; a cut file says where read_file can go on.",
        ReadMultipleInput,
        "fsmcp_read.multi:read_multiple_files",
        READ_ONLY,
        title="Read multiple files",
    ),
    Tool(
        "list_directory",
        "List a directory: a '[FILE] name', '[DIR] name' or '[LINK] name -> target' line per entry, by name.",
        ListDirectoryInput,
        "fsmcp_read.listing:list_directory",
        READ_ONLY,
        title="List directory",
    ),
    Tool(
        "directory_tree",
        "A directory's tree as compact JSON {name, type (file, directory, symlink), children}. Over the output "
        "budget it is filled breadth-first; a directory whose children were left out has \"truncated\":true.",
        DirectoryTreeInput,
        "fsmcp_read.tree:directory_tree",
        READ_ONLY,
        title="Directory tree",
    ),
    Tool(
        "get_file_info",
        "Metadata of a file, directory or link (not its target): type, size, times (ISO-8601 UTC), permissions "
        "(octal), a link's target, and the version expectedVersion takes.",
        PathInput,
        "fsmcp_read.info:get_file_info",
        READ_ONLY,
        title="Get file info",
        output_model=FileInfoOutput,
    ),
    Tool(
        "list_allowed_directories",
        "The directories this server may access, each (read-write) or (read-only). Every tool takes paths "
        "absolute or relative to the workspace.",
        NoInput,
        "fsmcp_read.info:list_allowed_directories",
        READ_ONLY,
        title="List allowed directories",
        output_model=AllowedDirectoriesOutput,
    ),
]
