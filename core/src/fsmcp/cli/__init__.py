"""The fsmcp command."""
