"""`POST /v1/review` claims every pending turn of the scope, also one another transaction holds right then.

The indexer holds just-stored turns for a moment while it stores their embeddings, and a claim skips locked
rows (concurrent schedulers must claim disjoint turns). A review request that only skipped them left them
for the next trigger, minutes away for an idle session, while `hindsight ingest --wait` waited."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, text

from pipeline.adapters.postgres.scheduling_sql import CLAIM_LOCK_WAIT_S
from pipeline.core.models import Dispatch, Scope
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

    stack.client.write_memory(AGENT, "someone-else", "s1", "user", "Another scope's turn.", ts=T0)
    wait_until(lambda: _counts(stack) == (5, 5), timeout=30, what="5 pending turns stored")
    # The request looks at its own scope's backlog only.
    assert [b.scope for b in stack.repo.backlog(Scope(AGENT, USER))] == [Scope(AGENT, USER)]
    assert {b.scope for b in stack.repo.backlog()} == {Scope(AGENT, USER), Scope(AGENT, "someone-else")}
    # Held longer than a claim waits for it: the request's own re-claiming gets it.
    holder, release = _hold_one(stack, CLAIM_LOCK_WAIT_S + 1.0)
    try:
        response = stack.api.post("/v1/review", json={**SCOPE, "full": True})
    finally:
        release.join()
        holder.close()
    assert response.status_code == 202, response.text
    assert response.json()["batch_ids"], response.text
    # All four, the held one too, are in the batches this request dispatched; the other scope's is not.
    assert _counts(stack) == (1, 5)


def _counts(stack: Stack) -> tuple[int, int]:
    with stack.repo.engine.connect() as conn:
        unclaimed, total = conn.execute(text(COUNT_SQL), {"a": AGENT}).one()
    return int(unclaimed), int(total)


def _hold_one(stack: Stack, for_s: float) -> tuple[Connection, threading.Timer]:
    """One pending turn of the scope locked by another transaction (as the indexer does while it stores
    embeddings), released after `for_s` seconds."""
    holder = stack.repo.engine.connect()
    held = holder.begin()
    holder.execute(
        text("SELECT id FROM episodes WHERE agent_id = :a AND user_id = :u ORDER BY id LIMIT 1 FOR UPDATE"),
        {"a": AGENT, "u": USER},
    )
    release = threading.Timer(for_s, held.commit)
    release.start()
    return holder, release


@pytest.mark.parametrize(("held_s", "claimed"), [(0.2, 4), (3.0, 3)])
def test_a_claim_waits_briefly_for_a_held_turn_then_skips_it(
    stack: Stack, held_s: float, claimed: int
) -> None:
    # A scheduler's claim waits out a short hold (the session's review stays one batch) and skips a long one
    # after CLAIM_LOCK_WAIT_S (the rest is claimed later): it never waits as long as the holder.
    stack.start_scheduler(batch_size=10_000, idle_s=3600.0)
    for i in range(4):
        stack.client.write_memory(
            AGENT, USER, "s1", "user", f"Fact number {i} about the garden.", ts=T0 + timedelta(minutes=i)
        )
    wait_until(lambda: _counts(stack) == (4, 4), timeout=30, what="4 pending turns stored")
    holder, release = _hold_one(stack, held_s)
    try:
        started = time.monotonic()
        batch_id = stack.repo.claim(Dispatch(Scope(AGENT, USER), "full", "manual"), min_count=1, limit=100)
        took = time.monotonic() - started
    finally:
        release.join()
        holder.close()
    assert batch_id is not None
    assert _counts(stack) == (4 - claimed, 4)
    assert took < min(held_s, CLAIM_LOCK_WAIT_S) + 1.0
