"""The batch lease against the real PostgreSQL: a running batch whose review holds its lease is never
re-sent, however old; once the holder's connection is gone it is re-sent at the next reconcile."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.batch_lease import batch_lease
from pipeline.adapters.postgres.engine import libpq_dsn
from pipeline.adapters.postgres.repository import Repository
from tests.helpers import wait_until
from tests.integration.harness import DB_URL

pytestmark = pytest.mark.integration
STALE = {"undispatched_s": 30.0, "unfinished_s": 1200.0, "lease_grace_s": 15.0}


def _running_batch(repo: Repository) -> int:
    """A batch a worker started two hours ago (and was dispatched as long ago): a long review."""
    with repo.engine.begin() as conn:
        return int(
            conn.execute(
                text(
                    "INSERT INTO batches (agent_id, user_id, kind, trigger, status, attempts, created_at,"
                    " dispatched_at, started_at) VALUES ('lease-agent', 'u1', 'light', 'manual', 'running',"
                    " 1, now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours')"
                    " RETURNING id"
                )
            ).scalar_one()
        )


def test_a_held_lease_keeps_a_long_review_and_a_lost_one_sends_it_again(
    clean: None, repo: Repository, unsent_batches: None
) -> None:
    batch_id = _running_batch(repo)
    dsn = libpq_dsn(DB_URL)
    with batch_lease(dsn, batch_id) as held:
        assert held
        assert batch_id not in repo.stalled_batches(**STALE)  # a live review, however long
        with batch_lease(dsn, batch_id) as second:
            assert not second  # a second delivery leaves it to the holder
    # The holder's connection is gone (its worker died): the batch is sent again. A dead backend lets its
    # locks go a moment after its client is gone, so the next reconcile finds it (here: within seconds).
    wait_until(lambda: batch_id in repo.stalled_batches(**STALE), timeout=10, what="the orphaned batch")
    with repo.engine.begin() as conn:  # just restarted (a retry after an upstream error): grace
        conn.execute(text("UPDATE batches SET started_at = now() WHERE id = :b"), {"b": batch_id})
    assert batch_id not in repo.stalled_batches(**STALE)
