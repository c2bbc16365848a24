"""The notebook family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import EditNotebookInput, ReadNotebookInput

TOOLS = [
    Tool(
        "read_notebook",
        "Read a Jupyter notebook (.ipynb) as numbered cells with their type and id, instead of its JSON; "
        "outputs summarized within the output budget.",
        ReadNotebookInput,
        "fsmcp_notebook.read:read_notebook",
        READ_ONLY,
        title="Read notebook",
    ),
    Tool(
        "edit_notebook",
        "Change a notebook's cells: insert, replace, delete, move; never edit .ipynb JSON as text. All or "
        "nothing, validated as nbformat before writing; formatting and metadata kept, an edited code cell's "
        "outputs cleared.",
        EditNotebookInput,
        "fsmcp_notebook.edit:edit_notebook",
        DESTRUCTIVE,
        title="Edit notebook",
    ),
]
