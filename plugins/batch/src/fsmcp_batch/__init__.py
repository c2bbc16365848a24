"""fsmcp-batch."""
