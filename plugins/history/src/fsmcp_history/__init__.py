"""fsmcp-history: the tools over the host's change journal (list and undo changes)."""
