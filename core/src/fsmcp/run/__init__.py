"""The host: plugins loaded, one call runner, the context a tool gets, the tool list kept."""
