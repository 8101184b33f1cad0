"""The indexer drains the rows of turns just stored (recallable before their review) before the reviews'
re-index rows, whatever their order of arrival: freshness does not wait behind a review backlog."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.core.models import Turn
from pipeline.core.ports import IndexPoint

pytestmark = pytest.mark.integration

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def _turn(i: int) -> Turn:
    return Turn(
        turn_id=f"t-{i}",
        agent_id="a",
        user_id="u",
        session_id="s",
        role="user",
        content=f"My favourite number is {i}.",
        ts=T0,
        source="user",
    )


def test_rows_of_turns_just_stored_are_drained_first(clean: None, repo: Repository) -> None:
    # A backlog of re-index rows (what reviews queue), then one turn stored prescreened.
    repo.ingest([_turn(i) for i in range(5)], [])
    with repo.engine.begin() as conn:
        conn.execute(text("INSERT INTO index_outbox (kind, ref_id) SELECT 'episode', id FROM episodes"))
    assert repo.ingest([_turn(99)], [], [True]) == 1
    with repo.engine.connect() as conn:
        fresh = conn.scalar(text("SELECT id FROM episodes WHERE turn_id = 't-99'"))
        assert conn.scalar(text("SELECT count(*) FROM index_outbox")) == 6

    taken: list[tuple[list[IndexPoint], list[str]]] = []

    def apply(upserts: list[IndexPoint], deletes: list[str], gone: list[int]) -> None:
        taken.append((upserts, deletes))

    class OneVector:
        dimension = 3

        def embed(self, texts: object) -> list[list[float]]:
            return [[1.0, 0.0, 0.0] for _ in texts]  # type: ignore[attr-defined]

    assert repo.process_outbox(1, apply, OneVector()) == 1  # type: ignore[arg-type]
    ((upserts, deletes),) = taken
    # The newest row went first, and it was embedded and indexed while still pending.
    assert [p.payload["ref_id"] for p in upserts] == [fresh]
    assert deletes == []
    with repo.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM index_outbox WHERE early")) == 0
        assert conn.scalar(text("SELECT embedding IS NOT NULL FROM episodes WHERE id = :i"), {"i": fresh})
