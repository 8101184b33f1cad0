"""Bulk statements kept far below PostgreSQL's bind-parameter limit, whatever a review produces.

The protocol counts a statement's parameters in 16 bits: 65,535 at most. A multi-row INSERT ... VALUES
takes one per column per row, so an unbounded row list fails past ~8,000 rows of 8 columns (issue 44: a
busy scope's 66,726 supersession links in one batch). The error is raised before the statement reaches
the server, the same way each time: no retry can help. Every caller that builds one statement from a
list goes through `chunks`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

PG_MAX_PARAMETERS = 65_535
# Well below the limit: room for the statement's other parameters, and a statement this size is already
# as fast per row as a larger one.
MAX_PARAMETERS = 16_000

T = TypeVar("T")


def rows_per_statement(columns: int, *, max_parameters: int = MAX_PARAMETERS) -> int:
    """How many rows of `columns` bound values fit in one statement."""
    return max(1, max_parameters // max(1, columns))


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size` (none when empty)."""
    step = max(1, size)
    for start in range(0, len(items), step):
        yield items[start : start + step]
