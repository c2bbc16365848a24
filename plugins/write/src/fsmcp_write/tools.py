"""The write family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import CREATES, DESTRUCTIVE, OVERWRITES, Tool

from .models import (
    AppendFileInput,
    AppendFileOutput,
    CreateDirectoryInput,
    CreateDirectoryOutput,
    DeleteFileInput,
    DeleteFileOutput,
    TransferInput,
    TransferOutput,
    WriteFileInput,
    WriteFileOutput,
    WriteFilesInput,
    WriteFilesOutput,
)

TOOLS = [
    Tool(
        "write_file",
        "Create a file, or replace its whole content. Atomic: readers see the old file or the new, never a mix, "
        "and a failure leaves the old file as it was. Missing parent directories are created; the mode of a "
        "replaced file is kept. Use encoding: base64 for binary data. To change part of a file use edit_file; "
        "to add at the end use append_file.",
        WriteFileInput,
        "fsmcp_write.content:write_file",
        OVERWRITES,
        title="Write file",
        output_model=WriteFileOutput,
    ),
    Tool(
        "write_files",
        "Write several files, each as write_file would, all or nothing: if one fails, none is changed.",
        WriteFilesInput,
        "fsmcp_write.content:write_files",
        OVERWRITES,
        title="Write files",
        output_model=WriteFilesOutput,
    ),
    Tool(
        "append_file",
        "Add text at the end of an existing file. With ensureNewline (default true) the appended text ends with "
        "a newline. A missing file is an error unless create: true.",
        AppendFileInput,
        "fsmcp_write.content:append_file",
        DESTRUCTIVE,
        title="Append to file",
        output_model=AppendFileOutput,
    ),
    Tool(
        "create_directory",
        "Create a directory and any missing parents (mkdir -p). Succeeds, changing nothing, when it already exists.",
        CreateDirectoryInput,
        "fsmcp_write.entries:create_directory",
        CREATES,
        title="Create directory",
        output_model=CreateDirectoryOutput,
    ),
    Tool(
        "copy_file",
        "Copy a file, a link (as a link) or a whole directory tree to a new path. The copy appears all at once "
        "or not at all. An existing destination is an error unless overwrite: true.",
        TransferInput,
        "fsmcp_write.entries:copy_file",
        OVERWRITES,
        title="Copy file or directory",
        output_model=TransferOutput,
    ),
    Tool(
        "move_file",
        "Move or rename a file, link (as a link, never its target) or directory, also between allowed "
        "directories. An existing destination is an error unless overwrite: true; when the destination is "
        "refused, the source stays where it was.",
        TransferInput,
        "fsmcp_write.entries:move_file",
        DESTRUCTIVE,
        title="Move or rename",
        output_model=TransferOutput,
    ),
    Tool(
        "delete_file",
        "Delete a file, a link (never its target) or a directory. A directory that is not empty needs "
        "recursive: true. An allowed directory itself is never deleted. This cannot be undone.",
        DeleteFileInput,
        "fsmcp_write.entries:delete_file",
        DESTRUCTIVE,
        title="Delete",
        output_model=DeleteFileOutput,
    ),
]
