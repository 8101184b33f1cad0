"""Changing the embedding model of a live store (issue 45 part 3), through the public doors: turns reviewed
with the default model (MiniLM + USE) by the real worker; a role started with multilingual-e5-small refuses with one line
that names `hindsight reindex`; POST /v1/reindex with the new model re-embeds into a new collection while
recall keeps answering from the old one; the API process ends half-way (a step of N memories) and a new
one continues; after the switch recall answers with e5, the stored embeddings are e5's, the old collection
is gone, and the roles start with e5 and refuse the default."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.api.app import create_app
from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.core.vectors import from_blob
from pipeline.runtime.roles import build_api_deps
from tests.helpers import wait_until
from tests.integration.harness import DB_URL, REDIS_URL, Stack, WorkerProcess, make_settings

pytestmark = pytest.mark.integration

E5 = "multilingual-e5-small"
DEFAULT = Settings().embedding.model  # all-MiniLM-L6-v2+use-m
MINILM = "all-MiniLM-L6-v2"
AGENT, USER = "concierge", "ana"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FACTS = [
    "My sister Marta lives in Porto, right by the river.",
    "I adopted a grey cat called Miso last winter.",
    "I work as a nurse on night shifts at the children's hospital.",
    "My favourite dish is grilled sardines with roasted peppers.",
]
FILLER = [
    "The weather was lovely this morning, I walked to the bakery.",
    "I finally finished the crossword from Sunday.",
    "We watched an old film about sailors last night.",
    "The bus was late again so I read on my phone.",
    "I repainted the small shelf in the hallway.",
    "My neighbour lent me a ladder for the weekend.",
]
TURNS = [*FACTS, *(f"{f} ({i})" for i in range(4) for f in FILLER)]  # 28 turns


def _recall(api: TestClient, q: str) -> list[str]:
    response = api.get("/v1/recall", params={"q": q, "agent_id": AGENT, "user_id": USER, "k": 5})
    assert response.status_code == 200, response.text
    return [str(r["text"]) for r in response.json()["results"]]


def _status(api: TestClient) -> dict[str, Any]:
    response = api.get("/v1/reindex")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _start_api_role(tmp: Path, model: str) -> subprocess.CompletedProcess[str]:
    """`hindsight api` as an operator starts it, with `model` configured."""
    env = {
        **os.environ,
        "HINDSIGHT_DATABASE_URL": DB_URL,
        "HINDSIGHT_REDIS_URL": REDIS_URL,
        "HINDSIGHT_DATA_DIR": str(tmp),
        "HINDSIGHT_EMBEDDING__MODEL": model,
        "HINDSIGHT_API_PORT": "1",  # never reached: the check comes first
    }
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "api"], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_model_change_re_embeds_beside_the_old_index_survives_a_stop_and_switches(
    clean: None, repo: Repository, worker: WorkerProcess, tmp_path: Path, forget_model: None
) -> None:
    settings = make_settings(tmp_path, indexer_poll_s=0.5)
    deps = build_api_deps(settings, run_indexer=True)
    with TestClient(create_app(deps)) as api:
        stack = Stack(settings, repo, deps.stream, api, MemoryClient(settings), deps.index)
        try:
            stack.start_scheduler()
            ids = [
                stack.client.write_memory(
                    AGENT, USER, "s1", "user", content, ts=T0 + timedelta(minutes=i), turn_id=f"t{i}"
                )
                for i, content in enumerate(TURNS)
            ]
            stack.client.end_session(AGENT, USER, "s1")
            stack.wait_indexed(ids)
        finally:
            stack.stop()
        assert FACTS[0] in _recall(api, "where does my sister live")
        assert _status(api)["model"] == DEFAULT

        # A role configured with e5 refuses to start: one line naming the way out, no traceback.
        refused = _start_api_role(tmp_path, E5)
        assert refused.returncode != 0
        assert "hindsight reindex --model multilingual-e5-small" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr

        # A first step of 10 memories, then this process ends (as a killed API would, between two batches).
        response = api.post("/v1/reindex", json={"model": E5, "max_items": 10})
        assert response.status_code == 202, response.text
        wait_until(lambda: _status(api)["state"] == "paused", timeout=300, what="the first step")
        status = _status(api)
        change = status["change"]
        assert isinstance(change, dict)
        assert (change["model"], change["done"], change["phase"]) == (E5, 10, "embed_episodes")
        # Recall still answers from the old collection, with the old model.
        assert status["model"] == DEFAULT
        assert FACTS[1] in _recall(api, "what is the name of my cat")
        assert (tmp_path / "qdrant").is_dir()
        assert (tmp_path / str(change["collection"])).is_dir()

    # A new API process (still configured with the store's model) continues where the last one stopped.
    deps = build_api_deps(settings, run_indexer=True)
    with TestClient(create_app(deps)) as api:
        status = _status(api)
        assert status["state"] == "paused"
        assert status["change"]["done"] == 10
        response = api.post("/v1/reindex", json={"model": E5})
        assert response.status_code == 202, response.text
        wait_until(lambda: _status(api)["state"] == "idle", timeout=300, what="the model change")
        status = _status(api)
        assert status["error"] is None
        assert status["model"] == E5
        collection = str(status["collection"])
        assert collection != "qdrant"
        assert (tmp_path / collection).is_dir()
        assert not (tmp_path / "qdrant").exists()  # the old collection is dropped
        wait_until(lambda: repo.outbox_lag()[0] == 0, timeout=60, what="the re-queued outbox")
        assert FACTS[0] in _recall(api, "where does my sister live")
        assert FACTS[2] in _recall(api, "what do I do for work")
        # Cross-language: only a multilingual model finds this.
        assert FACTS[1] in _recall(api, "¿cómo se llama mi gato?")
        # The stored embeddings are e5's (each of the 28 once: nothing staged is left, nothing doubled).
        with repo.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT content, embedding FROM episodes WHERE embedding IS NOT NULL ORDER BY id")
            ).all()
            assert conn.scalar(text("SELECT count(*) FROM reindex_vectors")) == 0
        assert len(rows) == len(TURNS)
        fresh = deps.embedder.embed([rows[0].content])[0]
        assert float(np.dot(fresh, from_blob(rows[0].embedding))) == pytest.approx(1.0, abs=1e-4)
        assert deps.index.count() >= len(TURNS)

    # The roles now start with e5, and refuse the old model.
    e5 = make_settings(tmp_path, embedding={"model": E5})
    build_api_deps(e5, run_indexer=True).index.close()
    with pytest.raises(ConfigError, match=re.escape(f"hindsight reindex --model {DEFAULT}")):
        build_api_deps(settings, run_indexer=True)


def test_a_store_with_vectors_from_before_the_record_is_taken_as_minilm(
    clean: None, repo: Repository, tmp_path: Path, forget_model: None
) -> None:
    """A store from an older release (vectors, no record) must not be claimed by a new default model: it
    was MiniLM's, so the default (MiniLM + USE) refuses it, naming the way to reindex or to keep MiniLM."""
    with repo.engine.begin() as conn:
        conn.execute(text("TRUNCATE embedding_model"))  # an older release recorded none
        conn.execute(
            text(
                "INSERT INTO episodes (turn_id, agent_id, user_id, session_id, role, content, ts, source, "
                "embedding, status) VALUES ('t0', 'a', 'u', 's', 'user', 'hello', now(), 'api', :e, 'kept')"
            ),
            {"e": np.zeros(384, dtype="<f4").tobytes()},
        )
    e5 = make_settings(tmp_path, embedding={"model": E5})
    with pytest.raises(ConfigError, match="made by all-MiniLM-L6-v2"):
        build_api_deps(e5, run_indexer=True)
    default: Settings = make_settings(tmp_path)
    with pytest.raises(
        ConfigError, match=f"HINDSIGHT_EMBEDDING__MODEL={MINILM} .*--model {re.escape(DEFAULT)}"
    ):
        build_api_deps(default, run_indexer=True)
    build_api_deps(make_settings(tmp_path, embedding={"model": MINILM}), run_indexer=True).index.close()
