"""fsmcp-notebook: Jupyter notebooks read as cells and edited cell by cell, all or nothing."""
