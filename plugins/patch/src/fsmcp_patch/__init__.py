"""fsmcp-patch."""
