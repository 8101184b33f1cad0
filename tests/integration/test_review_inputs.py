"""`Repository.review_inputs`: the one read of a review gives what the separate reads give, also when
the memory limit cuts the scope short of the points a full review clusters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.core.models import Dispatch, Scope, Turn
from pipeline.core.review_records import BatchInfo

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SCOPE = Scope("agent-a", "inputs")


def _turns(first: int, n: int) -> list[Turn]:
    return [
        Turn(
            f"t{i}",
            SCOPE.agent_id,
            SCOPE.user_id,
            "s",
            "user",
            f"turn {i}",
            T0 + timedelta(minutes=i),
            "user",
        )
        for i in range(first, first + n)
    ]


def _claim(repo: Repository, kind: str, limit: int) -> BatchInfo:
    trigger = "manual" if kind == "full" else "session_end"
    session = None if kind == "full" else "s"
    batch_id = repo.claim(Dispatch(SCOPE, kind, trigger, session), min_count=1, limit=limit)  # type: ignore[arg-type]
    assert batch_id is not None
    return BatchInfo(batch_id, SCOPE.agent_id, SCOPE.user_id, session, kind, trigger, "pending", 0)


def _history(repo: Repository, n: int, superseded: set[int]) -> None:
    """`n` kept, embedded episodes that went through a full review; those in `superseded` state only a
    fact that a newer value closed."""
    repo.ingest(_turns(0, n), [])
    _claim(repo, "full", n)
    rng = np.random.default_rng(7)
    with repo.engine.begin() as conn:
        for i in range(n):
            v = rng.standard_normal(384).astype("<f4")
            conn.execute(
                text(
                    "UPDATE episodes SET status = 'kept', embedding = :e, quality = CAST(:q AS jsonb), "
                    "reviewed_at = ts WHERE turn_id = :t"
                ),
                {"e": (v / np.linalg.norm(v)).tobytes(), "q": f'{{"total": {i / n:.3f}}}', "t": f"t{i}"},
            )
        for i in superseded:
            conn.execute(
                text(
                    "INSERT INTO facts (agent_id, user_id, entity, attribute, value, valid_from, valid_to, "
                    "source, turn_ids) VALUES (:a, :u, 'user', 'city', :v, :f, :to, 'user', ARRAY[:t])"
                ),
                {
                    "a": SCOPE.agent_id,
                    "u": SCOPE.user_id,
                    "v": f"city {i}",
                    "f": T0 + timedelta(minutes=i),
                    "to": T0 + timedelta(minutes=i + 1),
                    "t": f"t{i}",
                },
            )


@pytest.mark.usefixtures("clean")
@pytest.mark.parametrize(
    ("memory_limit", "cluster_limit"),
    [
        (1000, 1000),  # the whole scope
        (40, 25),  # the memory limit cuts the scope; enough clusterable rows among the most recent
        (30, 28),  # ... and too few of them: the points are read on their own
    ],
)
def test_review_inputs_match_the_separate_reads(
    repo: Repository, memory_limit: int, cluster_limit: int
) -> None:
    _history(repo, 60, superseded={50, 52, 54, 56, 58, 59})
    repo.ingest(_turns(60, 5), [])
    batch = _claim(repo, "full", 5)

    got = repo.review_inputs(batch, memory_limit=memory_limit, cluster_limit=cluster_limit)

    episodes = repo.batch_episodes(batch)
    exclude = [ep.id for ep in episodes]
    assert (
        [ep.turn_id for ep in got.episodes]
        == [f"t{i}" for i in range(60, 65)]
        == [ep.turn_id for ep in episodes]
    )
    memories = repo.scope_memories(SCOPE.agent_id, SCOPE.user_id, exclude=exclude, limit=memory_limit)
    assert [(m.id, m.ts) for m in got.memories] == [(m.id, m.ts) for m in memories]
    assert all(np.array_equal(a.vector, b.vector) for a, b in zip(got.memories, memories, strict=True))
    points = repo.cluster_inputs(SCOPE.agent_id, SCOPE.user_id, exclude=exclude, limit=cluster_limit)
    assert len(points) == min(cluster_limit, memory_limit, 60)
    assert [(p.episode_id, p.turn_ids, p.content, p.ts, p.importance, p.superseded) for p in got.points] == [
        (p.episode_id, p.turn_ids, p.content, p.ts, p.importance, p.superseded) for p in points
    ]
    # A turn whose every fact was superseded comes flagged (it joins no cluster; restated requests quote it
    # as no longer holding, issue 40).
    superseded = {f"t{i}" for i in (50, 52, 54, 56, 58, 59)}
    assert [p.turn_ids[0] for p in got.points if p.superseded] == [
        p.turn_ids[0] for p in got.points if p.turn_ids[0] in superseded
    ]
    assert superseded & {p.turn_ids[0] for p in got.points}
    assert got.fact_groups == repo.current_fact_groups(SCOPE.agent_id, SCOPE.user_id, min_turns=1) == []
    assert got.open_memories == repo.open_semantic(SCOPE.agent_id, SCOPE.user_id) == []


@pytest.mark.usefixtures("clean")
def test_a_light_review_reads_no_cluster_inputs(repo: Repository) -> None:
    _history(repo, 10, superseded=set())
    repo.ingest(_turns(10, 1), [])
    light = _claim(repo, "light", 10)

    got = repo.review_inputs(light, memory_limit=100, cluster_limit=100)

    assert [ep.turn_id for ep in got.episodes] == ["t10"]
    assert len(got.memories) == 10
    assert got.points == []
    assert got.fact_groups == []
    assert got.open_memories == []
