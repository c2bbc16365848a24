"""fsmcp-shell."""
