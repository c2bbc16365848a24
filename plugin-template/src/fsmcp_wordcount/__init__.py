"""fsmcp-wordcount."""
