"""drain_all: how many outbox passes one wake-up of the indexer makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from pipeline.adapters.fakes import InMemoryVectorIndex
from pipeline.adapters.indexer import drain_all
from pipeline.adapters.postgres.repository import Repository
from pipeline.core.ports import IndexPoint


class _Outbox:
    """Stands in for Repository.process_outbox: hands out `rows` in passes of at most `limit`."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.passes: list[int] = []

    def process_outbox(
        self, limit: int, apply: Callable[[list[IndexPoint], list[str]], None], embedder: object = None
    ) -> int:
        n = min(limit, self.rows)
        self.rows -= n
        apply([], [])
        self.passes.append(n)
        return n


@pytest.mark.parametrize(
    ("rows", "passes"),
    [(0, [0]), (10, [10]), (256, [256, 0]), (600, [256, 256, 88])],
)
def test_drain_all_stops_after_a_short_pass(rows: int, passes: list[int]) -> None:
    outbox = _Outbox(rows)
    repo = cast(Repository, cast(Any, outbox))
    assert drain_all(repo, InMemoryVectorIndex(4), limit=256) == rows
    assert outbox.passes == passes
    assert outbox.rows == 0
