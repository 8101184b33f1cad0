"""Issue 44: a batch that keeps failing is given up after its attempts, whatever the error class, with a
real worker; its turns stay recallable as unreviewed and an operator can send it again. Before, an error
classed retryable (the 65,535-parameter INSERT was one) was retried for ever, and a non-retryable one
waited for beat's reconcile with no end either when the worker died in it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from tasks.review import MAX_ATTEMPTS
from tests.helpers import wait_until
from tests.integration.harness import RETRY_MAX_DELAY_S, Stack

pytestmark = pytest.mark.integration

AGENT, USER = "doomed-agent", "ana"
OTHER = "other-user"
T0 = datetime(2026, 2, 1, 8, 0, tzinfo=UTC)
# SQLSTATE P0001 (raise_exception): an error the driver calls InternalError, not an upstream outage.
PERMANENT = "P0001"
# SQLSTATE 53300 (too_many_connections): an OperationalError, which the store classes as retryable.
RETRYABLE = "53300"


FailWith = Callable[[str], None]


@pytest.fixture
def failing_writes(repo: Repository) -> Iterator[FailWith]:
    """Make every review write of AGENT's scope fail with a given SQLSTATE: a trigger on the audit row each
    review writes last, so the whole write transaction rolls back each time."""

    def fail_with(code: str) -> None:
        with repo.engine.begin() as conn:
            conn.execute(
                text(
                    f"""
                    CREATE OR REPLACE FUNCTION test_fail_review() RETURNS trigger AS $$
                    BEGIN
                      IF NEW.agent_id = '{AGENT}' THEN
                        RAISE EXCEPTION 'injected review write failure' USING ERRCODE = '{code}';
                      END IF;
                      RETURN NEW;
                    END $$ LANGUAGE plpgsql
                    """
                )
            )
            conn.execute(text("DROP TRIGGER IF EXISTS test_fail_review ON reviews"))
            conn.execute(
                text(
                    "CREATE TRIGGER test_fail_review BEFORE INSERT ON reviews"
                    " FOR EACH ROW EXECUTE FUNCTION test_fail_review()"
                )
            )

    yield fail_with
    _drop(repo)


def _drop(repo: Repository) -> None:
    with repo.engine.begin() as conn:
        conn.execute(text("DROP TRIGGER IF EXISTS test_fail_review ON reviews"))
        conn.execute(text("DROP FUNCTION IF EXISTS test_fail_review()"))


def _write(stack: Stack, user: str, session: str, contents: list[str]) -> list[str]:
    ids = [
        stack.client.write_memory(
            AGENT, user, session, "user", c, ts=T0 + timedelta(minutes=i), turn_id=f"{user}-{session}-{i}"
        )
        for i, c in enumerate(contents)
    ]
    stack.client.end_session(AGENT, user, session)
    return ids


def _batch(repo: Repository, user: str) -> dict[str, Any]:
    with repo.engine.connect() as conn:
        row = conn.execute(
            text("SELECT id, status, attempts, error FROM batches WHERE agent_id = :a AND user_id = :u"),
            {"a": AGENT, "u": user},
        ).one()
        return dict(row._mapping)


def _given_up(stack: Stack, user: str) -> dict[str, Any]:
    turns = _write(stack, user, "s1", ["My weight this morning is 81.4 kg", "I keep a daily weight log"])
    wait_until(lambda: _has_batch(stack.repo, user), timeout=30, what="the batch to be dispatched")
    # Backoff 0.25 + 0.5 + 1 + 2 s between five attempts in the test worker (harness.WORKER_ENV).
    wait_until(lambda: _batch(stack.repo, user)["status"] == "failed", timeout=90, what="the give-up")
    batch = _batch(stack.repo, user)
    assert batch["attempts"] == MAX_ATTEMPTS
    assert "injected review write failure" in batch["error"]
    stats = stack.api.get("/v1/stats").json()
    assert stats["batches"].get("failed") == 1  # the give-up path is visible, as before
    # Nothing is lost: the turns are still recallable before any review (read your writes).
    hits = stack.recall("what was my weight this morning", AGENT, user, k=5)
    assert turns[0] in {t for h in hits for t in h["source_turn_ids"]}  # type: ignore[attr-defined]
    with stack.repo.engine.connect() as conn:
        pending = conn.scalar(
            text("SELECT count(*) FROM episodes WHERE agent_id = :a AND user_id = :u AND status = 'pending'"),
            {"a": AGENT, "u": user},
        )
    assert pending == len(turns)
    return batch


def _has_batch(repo: Repository, user: str) -> bool:
    with repo.engine.connect() as conn:
        n = conn.scalar(
            text("SELECT count(*) FROM batches WHERE agent_id = :a AND user_id = :u"), {"a": AGENT, "u": user}
        )
        return bool(n)


def test_a_batch_failing_with_a_permanent_error_is_given_up_and_an_operator_can_rerun_it(
    stack: Stack, failing_writes: FailWith
) -> None:
    failing_writes(PERMANENT)
    stack.start_scheduler()
    batch = _given_up(stack, USER)
    # The cause is fixed; the operator sends the given-up batch again, through the API (`hindsight review
    # --retry-failed`), and it is reviewed like any other.
    _drop(stack.repo)
    response = stack.api.post(
        "/v1/review", json={"agent_id": AGENT, "user_id": USER, "full": False, "retry_failed": True}
    )
    assert response.status_code == 202, response.text
    assert batch["id"] in response.json()["batch_ids"]
    wait_until(lambda: _batch(stack.repo, USER)["status"] == "done", timeout=60, what="the re-review")
    with stack.repo.engine.connect() as conn:
        statuses = set(
            conn.scalars(
                text("SELECT status FROM episodes WHERE agent_id = :a AND user_id = :u"),
                {"a": AGENT, "u": USER},
            )
        )
    assert "pending" not in statuses


def test_a_batch_failing_with_a_retryable_error_is_given_up_after_its_attempts(
    stack: Stack, failing_writes: FailWith
) -> None:
    failing_writes(RETRYABLE)
    stack.start_scheduler()
    batch = _given_up(stack, OTHER)
    assert batch["error"].startswith("retryable:")
    # Given up for good: no delivery starts it again on its own.
    attempts = batch["attempts"]
    time.sleep(3 * RETRY_MAX_DELAY_S)  # well past any retry's countdown
    assert _batch(stack.repo, OTHER)["attempts"] == attempts
    assert _batch(stack.repo, OTHER)["status"] == "failed"
