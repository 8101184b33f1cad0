"""`hindsight bench consolidation` end to end on a few topics of the labelled set: real full reviews in a
disposable database, then the open semantic memories read back and scored against the labels."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import text

from bench import consolidation
from pipeline.adapters.postgres.engine import make_engine
from pipeline.core.config import Settings

pytestmark = pytest.mark.integration

# A database of its own ("bench" in the name, as check_disposable wants): the bench TRUNCATEs it.
DATABASE_URL = os.environ.get(
    "HINDSIGHT_TEST_CONSOLIDATION_DATABASE_URL",
    "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_consolidation_test",
)
REDIS_URL = "redis://127.0.0.1:6379/11"  # checked by open_bench, never written by this bench


def test_bench_consolidation_scores_the_memories_full_reviews_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # BENCHMARKS.md would land here: --no-write must leave it empty
    out = io.StringIO()
    figures = consolidation.run_consolidation_bench(
        Settings(),
        database_url=DATABASE_URL,
        redis_url=REDIS_URL,
        users=["maya", "chen-jia"],
        topics=3,
        batch=10,
        verbose=True,
        write=False,
        console=Console(file=out, width=200),
    )
    subset = consolidation.subset(consolidation.load_set(), ["maya", "chen-jia"], 3)
    assert figures["turns"] == len(subset.turns)
    assert figures["topics"] == 6
    assert figures["reviews"] == sum(-(-len(ts) // 10) for ts in subset.by_user().values())
    for key in ("purity", "completeness", "grouped_share", "agglo_purity", "agglo_completeness"):
        assert 0.0 <= figures[key] <= 1.0, key
    assert (figures["alone_purity"], figures["alone_completeness"]) == (1.0, 0.0)

    # The memories the bench scored are the open ones the reviews left, members and all.
    engine = make_engine(DATABASE_URL)
    try:
        with engine.connect() as conn:
            open_memories = conn.scalar(text("SELECT count(*) FROM semantic_memories WHERE valid_to IS NULL"))
            members = conn.execute(
                text(
                    "SELECT m.id, e.turn_id FROM semantic_memories m JOIN semantic_members s ON s.memory_id = m.id "
                    "JOIN episodes e ON e.id = s.episode_id WHERE m.valid_to IS NULL"
                )
            ).all()
        memories = consolidation.read_memories(engine, subset.turns[0].agent_id)
    finally:
        engine.dispose()
    assert open_memories is not None
    assert open_memories > 0
    assert figures["memories"] == open_memories == len(memories)
    assert sorted((m.id, t) for m in memories for t in m.members) == sorted(
        (r.id, r.turn_id) for r in members
    )
    topic_of = {t.turn_id: t.topic for t in subset.turns}
    expected = consolidation.pairwise_purity([m.members for m in memories], topic_of).value
    assert figures["purity"] == pytest.approx(expected)

    report = out.getvalue()
    assert "pairwise purity" in report
    assert "completeness" in report
    for m in memories:  # verbose: every memory printed with its members
        assert f"#{m.id} " in report
    assert list(tmp_path.iterdir()) == []
