"""batch_operations as the host registers it; the batch machinery (``batch_operations.py``) loads
at the first batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import DESTRUCTIVE, READ_ONLY, Tool

from .models import BatchInput

if TYPE_CHECKING:
    from fsmcp import Settings

DESCRIPTION = """Several tool calls in one, in order, all checked first; the first failure stops the rest."""
READ_ONLY_NOTE = " The server is read-only: every tool it offers only reads."
_FUNCTION = "fsmcp_batch.batch_operations:batch_operations"


def tools_for(settings: Settings) -> list[Tool]:
    # Under read_only the batch still runs reads, so it stays, saying so (the host drops tools that only change).
    if settings.read_only:
        return [Tool("batch_operations", DESCRIPTION + READ_ONLY_NOTE, BatchInput, _FUNCTION, READ_ONLY, long=True)]
    return [Tool("batch_operations", DESCRIPTION, BatchInput, _FUNCTION, DESTRUCTIVE, long=True)]
