"""fsmcp-edit."""
