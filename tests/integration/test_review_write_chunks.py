"""Issue 44: a review write whose rows need more than PostgreSQL's 65,535 bind parameters succeeds.

A busy scope's batch once produced tens of thousands of supersession links; their one multi-row INSERT
(8 values a row) failed before reaching the server, the same way on every retry. The write now goes out
in statements of bounded size (pipeline/adapters/postgres/chunks.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.chunks import PG_MAX_PARAMETERS
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.review_writes import LINK_COLUMNS
from pipeline.core.models import Dispatch, Scope, Turn
from pipeline.core.review_records import ReviewWrite, SupersessionWrite

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 7, 0, tzinfo=UTC)
N = 100  # 100 x 99 ordered pairs: 9,900 links, 79,200 bound values in one INSERT


def test_a_review_write_past_the_parameter_limit_succeeds(clean: None, repo: Repository) -> None:
    scope = Scope("chunk-agent", "u1")
    turns = [
        Turn(
            f"t{i}",
            scope.agent_id,
            scope.user_id,
            "s1",
            "user",
            f"My weight this morning is {80 + i / 10:.1f} kg",
            T0 + timedelta(days=i),
            "user",
        )
        for i in range(N)
    ]
    assert repo.ingest(turns, []) == N
    batch_id = repo.claim(Dispatch(scope, "light", "manual", "s1"), min_count=1, limit=500)
    assert batch_id is not None
    batch = repo.start_batch(batch_id, T0)
    assert batch is not None
    with repo.engine.connect() as conn:
        ids = list(conn.scalars(text("SELECT id FROM episodes WHERE agent_id = 'chunk-agent' ORDER BY ts")))
    links = [SupersessionWrite(old, new, T0, {"rule": "test"}) for new in ids for old in ids if old != new]
    assert len(links) * LINK_COLUMNS > PG_MAX_PARAMETERS
    now = T0 + timedelta(days=N)
    done, counts = repo.complete_review(
        batch,
        ReviewWrite(supersessions=links),
        now=now,
        started_at=now,
        counts={},
        timings_ms={},
        worker="test",
    )
    assert done
    assert counts["supersessions_linked"] == len(links)
    with repo.engine.connect() as conn:
        stored = conn.scalar(text("SELECT count(*) FROM supersessions WHERE agent_id = 'chunk-agent'"))
        status = conn.scalar(text("SELECT status FROM batches WHERE id = :b"), {"b": batch_id})
    assert (stored, status) == (len(links), "done")
