"""fsmcp-workspace."""
