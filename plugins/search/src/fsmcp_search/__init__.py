"""fsmcp-search."""
