"""fsmcp-archive."""
