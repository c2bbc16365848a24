"""What a plugin and the host's parts share: the hook specs, tools, results, errors, settings."""

__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)
