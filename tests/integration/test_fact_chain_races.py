"""Fact chains stay consistent when several worker processes write the same chain at the same time."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from multiprocessing.pool import Pool

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from pipeline.adapters.postgres import fact_chains
from pipeline.adapters.postgres.engine import make_engine, make_sessionmaker
from pipeline.adapters.postgres.repository import Repository
from pipeline.core.models import FactCandidate
from pipeline.review import conflicts
from tests.integration.harness import DB_URL

pytestmark = pytest.mark.integration

PROCESSES = 4
T0 = datetime(2026, 1, 1, tzinfo=UTC)
Spec = tuple[str, int, str, float, bool, str]  # value, day, source, confidence, correction, turn id


def apply_all(specs: list[Spec]) -> int:
    """Runs in a worker process: each candidate in its own transaction, like concurrent reviews."""
    engine = make_engine(DB_URL, pool_size=1)
    sessions = make_sessionmaker(engine)
    for value, day, source, confidence, correction, turn_id in specs:
        candidate = FactCandidate(
            "user", "location", value, T0 + timedelta(days=day), source, confidence, (turn_id,), correction
        )
        with sessions.begin() as s:
            fact_chains.apply_candidates(s, "race", "u", [candidate], [], datetime.now(UTC))
    engine.dispose()
    return len(specs)


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as p:
        yield p


def _specs(prefix: str) -> st.SearchStrategy[list[Spec]]:
    return st.lists(
        st.tuples(
            st.sampled_from(["Hangzhou", "Shanghai", "Suzhou", "hangzhou"]),
            st.integers(0, 6),
            st.sampled_from(["user", "agent", "external"]),
            st.sampled_from([0.5, 0.8, 1.0]),
            st.booleans(),
            st.just(prefix),
        ),
        min_size=5,
        max_size=15,
    ).map(lambda xs: [(*x[:5], f"{prefix}-{i}") for i, x in enumerate(xs)])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.tuples(*(_specs(f"p{i}") for i in range(PROCESSES))))
def test_racing_workers_never_overlap_a_chain(
    pool: Pool, repo: Repository, work: tuple[list[Spec], ...]
) -> None:
    with repo.engine.begin() as conn:
        conn.execute(text("DELETE FROM facts WHERE agent_id = 'race'"))
    assert sum(pool.map(apply_all, list(work))) == sum(len(w) for w in work)

    with repo.engine.begin() as conn:
        chain = fact_chains.load_chain(conn, "race", "u", "user", "location")
        # The database's own view: no two believed versions overlap in valid time.
        overlaps = conn.execute(
            text(
                """SELECT count(*) FROM facts a JOIN facts b ON a.id < b.id
                   AND a.agent_id = b.agent_id AND a.user_id = b.user_id
                   AND a.entity = b.entity AND a.attribute = b.attribute
                   WHERE a.agent_id = 'race' AND a.retracted_at IS NULL AND b.retracted_at IS NULL
                   AND tstzrange(a.valid_from, a.valid_to) && tstzrange(b.valid_from, b.valid_to)"""
            )
        ).scalar()
    assert overlaps == 0
    assert conflicts.check_chain(chain) == []
    assert sum(1 for v in chain if not v.retracted and v.valid_to is None) == 1
    # History is never lost: every statement is recorded in some version (believed or not).
    recorded = {t for v in chain for t in v.turn_ids}
    assert recorded == {spec[5] for w in work for spec in w}
