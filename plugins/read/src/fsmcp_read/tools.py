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
        "Read a file. Text comes back as it is (line endings and all); images and other binary files come back "
        "as image/blob content with a mimeType. Choose a part with startLine/endLine, head or tail (lines) or "
        "offset/length (bytes); lineNumbers prefixes 'N | '. Large files are cut at the output budget with a "
        "note saying exactly where to continue.",
        ReadFileInput,
        "fsmcp_read.read_file:read_file",
        READ_ONLY,
        title="Read file",
    ),
    Tool(
        "read_multiple_files",
        "Read up to 50 files at once: one '<path>:\\n<content>' item per file, a failure shown inline as "
        "'[error: CODE message]' without failing the call. The output budget is shared fairly; a cut file "
        "says where read_file can continue.",
        ReadMultipleInput,
        "fsmcp_read.multi:read_multiple_files",
        READ_ONLY,
        title="Read multiple files",
    ),
    Tool(
        "list_directory",
        "List a directory, one '[FILE] name', '[DIR] name' or '[LINK] name -> target' line per entry, sorted "
        "by name. recursive lists everything below as relative paths; sizes adds file sizes in bytes; "
        "excludeGlobs leaves entries out; maxResults caps the list with a notice of how many were left out.",
        ListDirectoryInput,
        "fsmcp_read.listing:list_directory",
        READ_ONLY,
        title="List directory",
    ),
    Tool(
        "directory_tree",
        "A directory's tree as compact JSON {\"name\",\"type\",\"children\"} (types file, directory, symlink). "
        "depth limits it like find -maxdepth; excludeGlobs leaves entries out. A tree larger than the output "
        "budget is filled breadth-first, and directories whose children were left out carry \"truncated\":true.",
        DirectoryTreeInput,
        "fsmcp_read.tree:directory_tree",
        READ_ONLY,
        title="Directory tree",
    ),
    Tool(
        "get_file_info",
        "Metadata of a file, directory or link (the link itself, not its target): type, size, created, "
        "modified and accessed times (ISO-8601, UTC), permissions (octal) and, for a link, its target.",
        PathInput,
        "fsmcp_read.info:get_file_info",
        READ_ONLY,
        title="Get file info",
        output_model=FileInfoOutput,
    ),
    Tool(
        "list_allowed_directories",
        "The directories this server may access, one per line, each marked (read-write) or (read-only).",
        NoInput,
        "fsmcp_read.info:list_allowed_directories",
        READ_ONLY,
        title="List allowed directories",
        output_model=AllowedDirectoriesOutput,
    ),
]
