"""fsmcp-read: the read-only file tools."""
