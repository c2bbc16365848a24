"""The host's own defaults, registered through the same hooks as any plugin."""
