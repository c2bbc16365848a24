"""fsmcp-write: the tools that create, change, move and delete files."""
