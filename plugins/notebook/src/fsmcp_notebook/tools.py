"""The notebook family's tool definitions: names, descriptions, models, annotations."""

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import EditNotebookInput, ReadNotebookInput

TOOLS = [
    Tool(
        "read_notebook",
        "Read a Jupyter notebook (.ipynb) as numbered cells with type and id, not JSON.",
        ReadNotebookInput,
        "fsmcp_notebook.read:read_notebook",
        READ_ONLY,
    ),
    Tool(
        "edit_notebook",
        "Change a notebook's cells (never edit .ipynb JSON as text): all or nothing, validated as nbformat; "
        "formatting and metadata kept, an edited code cell's outputs cleared.",
        EditNotebookInput,
        "fsmcp_notebook.edit:edit_notebook",
        DESTRUCTIVE,
    ),
]
