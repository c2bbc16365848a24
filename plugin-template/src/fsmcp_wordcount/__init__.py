"""fsmcp-wordcount: an example fsmcp plugin with one tool, word_count."""
