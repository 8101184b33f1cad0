"""`POST /v1/review` claims every pending turn of the scope, also one another transaction holds right then.

The indexer holds just-stored turns for a moment while it stores their embeddings, and a claim skips locked
rows (concurrent schedulers must claim disjoint turns). A review request that only skipped them left them
for the next trigger, minutes away for an idle session, while `hindsight ingest --wait` waited."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

AGENT, USER = "on-demand", "u1"
T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SCOPE = {"agent_id": AGENT, "user_id": USER}
COUNT_SQL = "SELECT count(*) FILTER (WHERE full_batch_id IS NULL), count(*) FROM episodes WHERE agent_id = :a"


def test_a_review_request_waits_for_a_turn_another_transaction_holds(stack: Stack) -> None:
    # No trigger fires by itself: no session end, far from 30 turns, idle for an hour.
    stack.start_scheduler(batch_size=10_000, idle_s=3600.0)
    for i in range(4):
        stack.client.write_memory(
            AGENT, USER, "s1", "user", f"Fact number {i} about the garden.", ts=T0 + timedelta(minutes=i)
        )

    def counts() -> tuple[int, int]:
        with stack.repo.engine.connect() as conn:
            unclaimed, total = conn.execute(text(COUNT_SQL), {"a": AGENT}).one()
        return int(unclaimed), int(total)

    wait_until(lambda: counts() == (4, 4), timeout=30, what="4 pending turns stored")
    holder = stack.repo.engine.connect()
    held = holder.begin()
    # As the indexer does while it stores embeddings: one pending turn locked by another transaction.
    holder.execute(
        text("SELECT id FROM episodes WHERE agent_id = :a ORDER BY id LIMIT 1 FOR UPDATE"), {"a": AGENT}
    )
    release = threading.Timer(0.5, held.commit)
    release.start()
    try:
        response = stack.api.post("/v1/review", json={**SCOPE, "full": True})
    finally:
        release.join()
        holder.close()
    assert response.status_code == 202, response.text
    assert response.json()["batch_ids"], response.text
    # All four, the held one too, are in the batches this request dispatched.
    assert counts() == (0, 4)
