"""The recall environment the benches rank their product rows with (bench/locomo_eval.recall_env) holds the
lexicon the API builds: before, `bench updates` and `bench updates --longmemeval` passed none, and their
"product" ranked by the vectors alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.locomo_eval import recall_env
from pipeline.recall.hybrid import recall
from pipeline.recall.tuning import configured
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration


def test_the_benches_recall_environment_finds_by_words_as_the_api_does(stack: Stack, tmp_path: Path) -> None:
    stack.start_scheduler()
    [turn] = stack.write_session(
        "bench-env", "ana", "s1", [("user", "We moved to Lisbon in March.")], datetime(2026, 3, 1, tzinfo=UTC)
    )
    # A vector index of its own that holds nothing: what this environment finds, its lexicon found.
    env = recall_env(stack.settings, tmp_path / "empty-qdrant")
    try:
        hits = recall(
            "Lisbon",
            agent_id="bench-env",
            user_id="ana",
            k=5,
            repo=env.repo,
            store=env.store,
            index=env.index,
            embedder=env.deps.embedder,
            lexicon=env.deps.lexicon,
            tuning=configured(stack.settings),
        )
    finally:
        env.close()
    assert [h.source_turn_ids for h in hits] == [(turn,)]
    assert hits[0].explain is not None
    assert hits[0].explain["lexical"] > 0
