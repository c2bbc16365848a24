"""The output budget: one cap on the text a result carries, and truncation that says so."""

from __future__ import annotations


def truncate(text: str, limit: int, how_to_continue: str) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` characters at a line boundary, with a notice.

    The notice names how much was shown and ``how_to_continue`` (an offset, a ``startLine``,
    a narrower path or glob). Returns the text and whether it was cut.
    """
    if len(text) <= limit:
        return text, False
    notice_room = min(len(how_to_continue) + 120, limit // 2)
    cut = text.rfind("\n", 0, limit - notice_room)
    if cut <= 0:
        cut = limit - notice_room
    shown = text[:cut]
    notice = (
        f"\n[truncated: showed {len(shown):,} of {len(text):,} characters "
        f"(output budget {limit:,}). {how_to_continue}]"
    )
    return shown + notice, True


def fair_shares(needs: list[int], total: int) -> list[int]:
    """Split ``total`` characters max-min fairly: none gets more than it needs, the rest share evenly.

    For results made of several parts (several files, several batch steps) held to one budget.
    """
    shares = [0] * len(needs)
    left, count = max(total, 0), len(needs)
    for i in sorted(range(len(needs)), key=needs.__getitem__):
        shares[i] = min(needs[i], left // count)
        left -= shares[i]
        count -= 1
    return shares


def number_runs(numbers: list[int]) -> str:
    """Ascending numbers compactly: ``1, 2, 3, 5`` as ``1-3, 5`` (hunks, operations, lines)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
