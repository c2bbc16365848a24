"""The notebook family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import EditNotebookInput, ReadNotebookInput

TOOLS = [
    Tool(
        "read_notebook",
        "A Jupyter notebook's cells, numbered, with type and id.",
        ReadNotebookInput,
        "fsmcp_notebook.read_notebook:read_notebook",
        READ_ONLY,
    ),
    Tool(
        "edit_notebook",
        "Edit a notebook's cells, all or nothing, validated; formatting and metadata kept, an edited code "
        "cell's outputs cleared.",
        EditNotebookInput,
        "fsmcp_notebook.edit_notebook:edit_notebook",
        DESTRUCTIVE,
    ),
]
