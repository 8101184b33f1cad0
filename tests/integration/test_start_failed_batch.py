"""Issue 44: a given-up batch (status failed) is not started again by a late delivery; the store itself
refuses (before, only the task's check before the review did, and start_batch restarted it). An operator's
requeue sets it back to pending with its attempts reset, and then it starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.core.models import Dispatch, Scope, Turn

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 7, 0, tzinfo=UTC)
SCOPE = Scope("given-up-agent", "u1")


def _status(repo: Repository, batch_id: int) -> tuple[str, int]:
    with repo.engine.connect() as conn:
        row = conn.execute(text("SELECT status, attempts FROM batches WHERE id = :b"), {"b": batch_id}).one()
        return str(row.status), int(row.attempts)


def test_a_failed_batch_starts_again_only_after_an_operator_requeue(
    clean: None, repo: Repository, unsent_batches: None
) -> None:
    turns = [
        Turn(
            f"t{i}",
            SCOPE.agent_id,
            SCOPE.user_id,
            "s1",
            "user",
            f"note {i}",
            T0 + timedelta(minutes=i),
            "user",
        )
        for i in range(3)
    ]
    assert repo.ingest(turns, []) == 3
    batch_id = repo.claim(Dispatch(SCOPE, "light", "manual", "s1"), min_count=1, limit=500)
    assert batch_id is not None
    assert repo.start_batch(batch_id, T0) is not None
    assert repo.fail_batch(batch_id, "error: boom", max_attempts=1)  # given up after its one attempt
    assert _status(repo, batch_id) == ("failed", 1)

    # A late delivery: the store refuses to start it, and counts no attempt.
    assert repo.start_batch(batch_id, T0 + timedelta(seconds=5)) is None
    assert _status(repo, batch_id) == ("failed", 1)

    assert repo.requeue_failed(SCOPE) == [batch_id]
    started = repo.start_batch(batch_id, T0 + timedelta(seconds=10))
    assert started is not None
    assert started.attempts == 1
    assert _status(repo, batch_id) == ("running", 1)
