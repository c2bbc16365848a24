"""fsmcp-outline: the definitions of source files, and the source of one definition."""
