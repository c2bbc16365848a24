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
        "Create a file or replace its whole content, atomically; parents are created, the mode kept.",
        WriteFileInput,
        "fsmcp_write.write_file:write_file",
        OVERWRITES,
        output_model=WriteFileOutput,
    ),
    Tool(
        "write_files",
        "Write several files as write_file does, all or nothing.",
        WriteFilesInput,
        "fsmcp_write.write_files:write_files",
        OVERWRITES,
        output_model=WriteFilesOutput,
    ),
    Tool(
        "append_file",
        "Add text at the end of a file.",
        AppendFileInput,
        "fsmcp_write.append_file:append_file",
        DESTRUCTIVE,
        output_model=AppendFileOutput,
    ),
    Tool(
        "create_directory",
        "Create a directory; one that exists is a success.",
        CreateDirectoryInput,
        "fsmcp_write.create_directory:create_directory",
        CREATES,
        output_model=CreateDirectoryOutput,
    ),
    Tool(
        "copy_file",
        "Copy a file, link or directory tree, all or nothing.",
        TransferInput,
        "fsmcp_write.copy_file:copy_file",
        OVERWRITES,
        output_model=TransferOutput,
    ),
    Tool(
        "move_file",
        "Move or rename a file, link or directory, also across allowed directories.",
        TransferInput,
        "fsmcp_write.move_file:move_file",
        DESTRUCTIVE,
        output_model=TransferOutput,
    ),
    Tool(
        "delete_file",
        "Delete a file, link or directory; never an allowed directory itself.",
        DeleteFileInput,
        "fsmcp_write.delete_file:delete_file",
        DESTRUCTIVE,
        output_model=DeleteFileOutput,
    ),
]
