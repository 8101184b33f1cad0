"""A review that embedded with the old model cannot write after a model change switched the store.

The worker checks the store's model when a review starts; a switch (model_sql.ModelStore.switch) can commit
while the review embeds. Its old-model vectors, written after the switch, would sit in the new index where
no query of the new model finds them: the turn lost to recall. The write transaction checks the model under
a share lock on the store's model row, so it waits for a switch in progress and is refused after it."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import text

from pipeline.adapters.model_identity import ModelIdentity
from pipeline.adapters.postgres.repository import Repository
from pipeline.core.errors import ConfigError
from pipeline.core.models import Dispatch, Scope, Turn
from pipeline.core.review_records import ReviewWrite
from pipeline.core.vectors import to_blob

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 7, 0, tzinfo=UTC)
OLD = ModelIdentity("old-model", "a" * 64, 384)
NEW = ModelIdentity("new-model", "b" * 64, 384)


def _record(repo: Repository, model: ModelIdentity) -> None:
    with repo.engine.begin() as conn:
        conn.execute(text("DELETE FROM embedding_model"))
        conn.execute(
            text(
                "INSERT INTO embedding_model (id, name, weights_hash, dimension, collection) "
                "VALUES (1, :n, :h, :d, 'memories')"
            ),
            {"n": model.name, "h": model.weights_hash, "d": model.dimension},
        )


def _started_batch(repo: Repository) -> tuple[object, int]:
    scope = Scope("switch-agent", "u1")
    turn = Turn("t1", scope.agent_id, scope.user_id, "s1", "user", "I moved to Lisbon in May.", T0, "user")
    assert repo.ingest([turn], []) == 1
    batch_id = repo.claim(Dispatch(scope, "light", "manual", "s1"), min_count=1, limit=10)
    assert batch_id is not None
    batch = repo.start_batch(batch_id, T0)
    assert batch is not None
    with repo.engine.connect() as conn:
        episode = conn.scalar(text("SELECT id FROM episodes WHERE agent_id = 'switch-agent'"))
    return batch, int(episode)


def _write(repo: Repository, batch: object, episode: int) -> tuple[bool, dict[str, int]]:
    vector = to_blob(np.ones(384, dtype=np.float32) / np.sqrt(384))
    return repo.complete_review(
        batch,  # type: ignore[arg-type]
        ReviewWrite(embeddings={episode: vector}),
        now=T0,
        started_at=T0,
        counts={},
        timings_ms={},
        worker="test",
    )


def _state(repo: Repository, episode: int) -> tuple[object, str]:
    with repo.engine.connect() as conn:
        embedding = conn.scalar(text("SELECT embedding FROM episodes WHERE id = :e"), {"e": episode})
        status = conn.scalar(text("SELECT status FROM batches WHERE agent_id = 'switch-agent'"))
    return embedding, str(status)


def test_a_write_by_the_store_model_goes_through(
    clean: None, repo: Repository, forget_model: None, unsent_batches: None
) -> None:
    _record(repo, OLD)
    batch, episode = _started_batch(repo)
    done, _ = _write(Repository(repo.engine, vectors_by=OLD), batch, episode)
    embedding, status = _state(repo, episode)
    assert done
    assert embedding is not None
    assert status == "done"


def test_a_write_after_a_switch_mid_review_is_refused_and_nothing_lands(
    clean: None, repo: Repository, forget_model: None, unsent_batches: None
) -> None:
    _record(repo, OLD)
    batch, episode = _started_batch(repo)  # the review started under OLD and embedded with it
    worker = Repository(repo.engine, vectors_by=OLD)
    outcome: list[object] = []

    def write() -> None:
        try:
            outcome.append(_write(worker, batch, episode))
        except ConfigError as exc:
            outcome.append(exc)

    with repo.engine.connect() as switch:
        # A switch in progress: it holds the model row, as ModelStore.switch does, and records NEW.
        tx = switch.begin()
        switch.execute(text("SELECT 1 FROM embedding_model WHERE id = 1 FOR UPDATE"))
        switch.execute(
            text("UPDATE embedding_model SET name = :n, weights_hash = :h WHERE id = 1"),
            {"n": NEW.name, "h": NEW.weights_hash},
        )
        writer = threading.Thread(target=write)
        writer.start()
        writer.join(timeout=1.0)
        assert writer.is_alive(), "the review's write must wait for the switch in progress"
        tx.commit()
    writer.join(timeout=30)
    assert not writer.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], ConfigError), outcome
    assert "hindsight reindex" in str(outcome[0])
    embedding, status = _state(repo, episode)
    assert embedding is None  # the old model's vector never reached the store
    assert status != "done"  # the batch is retried, by a worker with the new model


def test_an_indexer_started_before_a_switch_leaves_the_outbox_for_its_restart(
    clean: None, repo: Repository, forget_model: None, unsent_batches: None
) -> None:
    _record(repo, NEW)  # switched after this indexer started with OLD
    _, episode = _started_batch(repo)
    with repo.engine.begin() as conn:  # the turn queued for the index, as a review queues it
        conn.execute(text("INSERT INTO index_outbox (kind, ref_id) VALUES ('episode', :e)"), {"e": episode})
    queued = 1
    applied: list[object] = []
    with pytest.raises(ConfigError, match="hindsight reindex"):
        Repository(repo.engine, vectors_by=OLD).process_outbox(10, lambda *changes: applied.append(changes))
    with repo.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM index_outbox")) == queued
    assert applied == []
    # The restarted indexer (the store's model) takes them.
    assert Repository(repo.engine, vectors_by=NEW).process_outbox(10, lambda *changes: None) == queued
