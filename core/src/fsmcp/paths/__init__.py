"""The path layer: roots, the path policy, confinement, the file-system primitives, one call's change, the stale-write guard."""
