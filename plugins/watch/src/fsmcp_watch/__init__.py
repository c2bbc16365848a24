"""fsmcp-watch."""
