"""A turn's point in the vector index reads it in the context of the turn before it, through the real
pipeline (scheduler, Celery worker, review, outbox, indexer): the first turn of a session is found by its
own vector, the next by review.index_vector.in_context of its own and its predecessor's, and once the
predecessor is forgotten the next turn is re-indexed by its own vector alone (nothing of a forgotten turn
stays in another turn's point)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from pipeline.core.vectors import from_blob
from pipeline.review.index_vector import in_context
from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
AGENT, USER = "concierge", "mira"
TURNS = [
    ("user", "Which neighbourhood in Lisbon would you suggest for a quiet week of writing?"),
    ("assistant", "Campo de Ourique is calm, has good cafes, and the tram 28 stops right there."),
    ("user", "Great, I booked an apartment near the Jardim da Estrela for the first week of June."),
]


def _found_by(stack: Stack, vector: object) -> tuple[int, float]:
    (hit,) = stack.index.search(vector.tolist(), agent_id=AGENT, user_id=USER, limit=1)  # type: ignore[attr-defined]
    return int(hit.payload["ref_id"]), hit.score


def _settle(stack: Stack) -> None:
    wait_until(lambda: stack.repo.outbox_lag()[0] == 0, timeout=30, what="the outbox to drain")


def test_a_turn_is_found_in_the_context_of_the_one_before_until_that_one_is_forgotten(stack: Stack) -> None:
    stack.start_scheduler()
    ids = [
        stack.client.write_memory(
            AGENT, USER, "s1", role, content, ts=T0 + timedelta(minutes=i), turn_id=f"s1-{i}"
        )
        for i, (role, content) in enumerate(TURNS)
    ]
    stack.client.end_session(AGENT, USER, "s1")
    stack.wait_indexed(ids)
    _settle(stack)
    with stack.repo.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT id, status, embedding FROM episodes WHERE agent_id = :a ORDER BY ts"), {"a": AGENT}
        ).all()
    assert [r.status for r in rows] == ["kept"] * 3
    (first, v1), (second, v2), (third, v3) = ((r.id, from_blob(r.embedding)) for r in rows)

    in_ctx = in_context(v2, v1)
    assert float(in_ctx @ v2) < 0.999  # the context moved it: a test of the same vector would prove nothing
    found, score = _found_by(stack, v1)
    assert (found, score) == (first, pytest.approx(1.0, abs=1e-4))
    found, score = _found_by(stack, in_ctx)
    assert (found, score) == (second, pytest.approx(1.0, abs=1e-4))
    found, score = _found_by(stack, in_context(v3, v2))
    assert (found, score) == (third, pytest.approx(1.0, abs=1e-4))

    body = {"agent_id": AGENT, "user_id": USER, "reason": "test", "actor": "tests"}
    assert stack.api.post(f"/v1/memories/episode:{first}/forget", json=body).status_code == 200
    _settle(stack)
    found, score = _found_by(stack, v2)
    assert (found, score) == (second, pytest.approx(1.0, abs=1e-4))
    assert stack.index.ids() == stack.repo.indexable_point_ids()
