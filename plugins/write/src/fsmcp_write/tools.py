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
        "Create a file or replace its whole content, atomically. Missing parents are created; a replaced file "
        "keeps its mode. Part of a file: edit_file; its end: append_file.",
        WriteFileInput,
        "fsmcp_write.content:write_file",
        OVERWRITES,
        output_model=WriteFileOutput,
    ),
    Tool(
        "write_files",
        "Write several files as write_file does, all or nothing.",
        WriteFilesInput,
        "fsmcp_write.content:write_files",
        OVERWRITES,
        output_model=WriteFilesOutput,
    ),
    Tool(
        "append_file",
        "Add text at the end of a file.",
        AppendFileInput,
        "fsmcp_write.content:append_file",
        DESTRUCTIVE,
        title="Append to file",
        output_model=AppendFileOutput,
    ),
    Tool(
        "create_directory",
        "Create a directory; when it exists, succeed and change nothing.",
        CreateDirectoryInput,
        "fsmcp_write.entries:create_directory",
        CREATES,
        output_model=CreateDirectoryOutput,
    ),
    Tool(
        "copy_file",
        "Copy a file, link or directory tree; the copy appears all at once or not at all.",
        TransferInput,
        "fsmcp_write.entries:copy_file",
        OVERWRITES,
        title="Copy file or directory",
        output_model=TransferOutput,
    ),
    Tool(
        "move_file",
        "Move or rename a file, link or directory, also across allowed directories; if the destination is "
        "refused, the source stays.",
        TransferInput,
        "fsmcp_write.entries:move_file",
        DESTRUCTIVE,
        title="Move or rename",
        output_model=TransferOutput,
    ),
    Tool(
        "delete_file",
        "Delete a file, link or directory; never an allowed directory itself.",
        DeleteFileInput,
        "fsmcp_write.entries:delete_file",
        DESTRUCTIVE,
        title="Delete",
        output_model=DeleteFileOutput,
    ),
]
