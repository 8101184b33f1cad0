"""The HTTP surface's error handling, the schema, the indexer's idempotence and the beat jobs (reconcile, decay)."""

from __future__ import annotations

import uuid

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import Base
from pipeline.core.models import Dispatch, Scope
from pipeline.core.ports import IndexPoint
from tasks.app import DECAY_TASK, RECONCILE_TASK
from tasks.app import create_app as create_celery_app
from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

TURN = {"agent_id": "agent-a", "user_id": "ana", "session_id": "s1", "role": "user", "content": "I like tea."}


def test_migrations_create_exactly_the_models(repo: Repository) -> None:
    with repo.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_bad_turns_are_rejected_whole_with_the_item_and_field_named(stack: Stack) -> None:
    body = [{**TURN, "turn_id": "ok-1"}, {**TURN, "turn_id": "bad", "content": ""}, {**TURN, "role": 3}]
    response = stack.api.post("/v1/turns", json=body)
    assert response.status_code == 422
    assert response.json()["detail"] == "item 1: content: missing"
    assert [e["index"] for e in response.json()["errors"]] == [1, 2]
    assert stack.stream.client.xlen("hindsight:turns") == 0  # all or nothing


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "message"),
    [
        ("post", "/v1/turns", {"json": {"not": "a list"}}, 422, "body"),
        (
            "post",
            "/v1/turns",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            422,
            "JSON",
        ),
        ("post", "/v1/turns", {"json": [TURN] * 1001}, 422, "at most 1000 turns"),
        ("get", "/v1/recall", {"params": {"q": "tea", "user_id": "ana"}}, 422, "agent_id"),
        ("get", "/v1/recall", {"params": {"q": "tea", "agent_id": "a", "user_id": "u", "k": 0}}, 422, "k"),
        (
            "get",
            "/v1/recall",
            {"params": {"q": "tea", "agent_id": "a", "user_id": "u", "as_of": "soon"}},
            422,
            "as_of",
        ),
        ("post", "/v1/review", {"json": {"agent_id": "a"}}, 422, "agent_id and user_id"),
        ("post", "/v1/sessions/end", {"json": {"agent_id": "a", "user_id": "u"}}, 422, "session_id"),
    ],
)
def test_bad_requests_get_a_4xx_with_a_message(
    stack: Stack, method: str, path: str, kwargs: dict[str, object], status: int, message: str
) -> None:
    response = getattr(stack.api, method)(path, **kwargs)
    assert response.status_code == status
    assert message in response.json()["detail"]


def test_request_bodies_are_size_limited(stack: Stack) -> None:
    huge = [{**TURN, "turn_id": f"t{i}", "content": "x" * 15_000} for i in range(400)]  # ~6 MB
    response = stack.api.post("/v1/turns", json=huge)
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]


def test_health_readiness_stats_and_openapi(stack: Stack) -> None:
    assert stack.api.get("/healthz").json() == {"status": "ok"}
    ready = stack.api.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"postgres": "ok", "redis": "ok", "qdrant": "ok"}
    stats = stack.api.get("/v1/stats").json()
    assert stats["episodes"] == {"total": 0}
    assert stats["stream"]["dead_letters"] == 0
    assert "/v1/recall" in stack.api.get("/openapi.json").json()["paths"]


def test_session_end_over_http_reviews_the_session(stack: Stack) -> None:
    stack.start_scheduler()
    assert stack.api.post("/v1/turns", json=[{**TURN, "turn_id": "h-1"}]).status_code == 202
    response = stack.api.post(
        "/v1/sessions/end", json={"agent_id": "agent-a", "user_id": "ana", "session_id": "s1"}
    )
    assert response.status_code == 202
    stack.wait_indexed(["h-1"])
    assert stack.recall("what does she drink", "agent-a", "ana")[0]["source_turn_ids"] == ["h-1"]


def test_reindex_rebuilds_the_index_from_postgres_without_duplicates(stack: Stack) -> None:
    stack.start_scheduler()
    facts = [
        "I live in Porto.",
        "My sister Marta is a pilot.",
        "I'm allergic to shellfish.",
        "My budget is 900 euros.",
        "I play the cello on Thursdays.",
    ]
    ids = [stack.client.write_memory("agent-a", "ana", "s1", "user", f) for f in facts]
    stack.client.end_session("agent-a", "ana", "s1")
    stack.wait_indexed(ids)
    orphan = str(uuid.uuid4())
    unit = [1.0] + [0.0] * (stack.settings.embedding.dimension - 1)
    stack.index.upsert([IndexPoint(orphan, unit, {"agent_id": "agent-a", "user_id": "ana"})])
    assert stack.index.count() == 6

    for _ in range(2):  # replaying the whole outbox twice rewrites the same points
        body = stack.api.post("/v1/reindex").json()
        wait_until(lambda: stack.repo.outbox_lag()[0] == 0, timeout=30, what="the outbox to drain")
    assert body["queued"] == 5
    assert stack.index.count() == 5
    assert orphan not in stack.index.ids()


def test_reconcile_redispatches_a_batch_no_scheduler_dispatched(stack: Stack, repo: Repository) -> None:
    # Turns stored, then claimed into a batch by a scheduler that died before sending the task.
    ids = [stack.client.write_memory("agent-a", "ana", "s1", "user", f"orphaned turn {i}") for i in range(3)]
    stack.start_scheduler(tick_s=3600)  # ingests, but its policy tick never comes round again
    wait_until(lambda: repo.turn_progress(ids)["received"] == 3, timeout=20, what="episodes")
    batch_id = repo.claim(Dispatch(Scope("agent-a", "ana"), "light", "manual", "s1"), min_count=1, limit=10)
    assert batch_id is not None
    with repo.engine.begin() as conn:
        conn.execute(
            text("UPDATE batches SET created_at = now() - interval '5 minutes' WHERE id = :b"),
            {"b": batch_id},
        )

    create_celery_app(stack.settings).send_task(RECONCILE_TASK)  # what beat sends every minute
    stack.wait_indexed(ids, timeout=60)
    with repo.engine.connect() as conn:
        assert conn.execute(text("SELECT status, attempts FROM batches")).all() == [("done", 1)]


def test_the_hourly_decay_job_sends_what_faded_to_cold_storage_and_out_of_the_index(
    stack: Stack, repo: Repository
) -> None:
    stack.start_scheduler()
    facts = ["I live in Porto.", "My sister Marta is a pilot.", "I play the cello on Thursdays."]
    ids = [stack.client.write_memory("agent-a", "ana", "s1", "user", f) for f in facts]
    ids.append(
        stack.client.write_memory(
            "agent-a", "ana", "s1", "user", "I'm allergic to shellfish.", metadata={"core": True}
        )
    )
    stack.client.end_session("agent-a", "ana", "s1")
    stack.wait_indexed(ids)
    with repo.engine.begin() as conn:  # two months without a recall
        conn.execute(
            text("UPDATE episodes SET received_at = received_at - interval '60 days', last_accessed = NULL")
        )
    assert stack.index.count() == 4

    create_celery_app(stack.settings).send_task(DECAY_TASK)  # what beat sends every hour
    wait_until(lambda: stack.index.count() == 1, timeout=60, what="the faded points to leave the index")
    with repo.engine.connect() as conn:
        status = dict(conn.execute(text("SELECT turn_id, status FROM episodes")).all())
    assert status == {**{t: "cold" for t in ids[:3]}, ids[3]: "kept"}  # the core memory is exempt
    assert stack.index.ids() == repo.indexable_point_ids()
