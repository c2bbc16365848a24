"""The texts every search tool shares: no matches, skipped globs, a budgeted path list."""

from __future__ import annotations

from fsmcp import shown_name, truncate

NO_MATCHES = "(no matches found)"


def skipped_note(skipped: list[str]) -> str:
    return f"[{len(skipped)} path(s) skipped: outside the allowed directories: {', '.join(skipped)}]"


def no_matches(skipped: list[str], hint: str | None = None) -> str:
    lines = [NO_MATCHES]
    if hint:
        lines.append(f"[{hint}]")
    if skipped:
        lines.append(skipped_note(skipped))
    return "\n".join(lines)


def path_list(paths: list[str], budget: int, narrow: str, notes: list[str]) -> str:
    """One path per line (names written by the host's rule), then the notes; cut to the budget with a notice saying how to narrow."""
    notes_size = sum(len(n) + 1 for n in notes)
    text, _ = truncate("\n".join(map(shown_name, paths)), budget - notes_size, narrow)
    return "\n".join([text, *notes])
