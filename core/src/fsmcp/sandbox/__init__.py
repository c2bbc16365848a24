"""Programs the server starts: Landlock, namespaces, the protected files they must not read."""
