"""Recall's SQL reads against PostgreSQL: autocommit on a shared pool, the lexicon's streamed read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import insert, text

from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres import recall_sql
from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.recall_sql import RecallStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import episodes, facts, semantic_members, semantic_memories
from pipeline.core.vectors import to_blob

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def test_recall_reads_run_in_autocommit_and_leave_the_shared_pool_transactional(migrated: str) -> None:
    engine = make_engine(migrated, pool_size=1)  # one connection: recall's and the writers' are the same
    try:
        store = RecallStore(engine)
        assert store.episodes([1], agent_id="a", user_id="u", as_of=None, history=False) == {}
        with store.engine.connect() as conn:
            recall_pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
            assert conn.connection.dbapi_connection.autocommit  # type: ignore[union-attr]
        with engine.connect() as conn:
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() == recall_pid
            # A writer's statements still share one transaction, rolled back unless committed.
            assert not conn.connection.dbapi_connection.autocommit  # type: ignore[union-attr]
            conn.execute(text("CREATE TEMP TABLE t_recall_pool (x int)"))
            conn.rollback()
            gone = conn.execute(text("SELECT to_regclass('pg_temp.t_recall_pool') IS NULL")).scalar_one()
            assert gone
    finally:
        engine.dispose()


def _episodes(repo: Repository, n: int) -> list[int]:
    rows = [
        {
            "turn_id": f"stream-{i}",
            "agent_id": "agent-s",
            "user_id": "user-s",
            "session_id": f"s{i // 4}",
            "role": "user",
            "content": f"turn number {i} about the {'cello' if i == n - 1 else 'garden'}",
            "ts": T0 + timedelta(minutes=i),
            "source": "user",
            "status": "kept",
            "embedding": to_blob(np.full(4, i + 1, dtype=np.float32)),
            "reviewed_at": T0 + timedelta(hours=1, seconds=i),
        }
        for i in range(n)
    ]
    with repo.engine.begin() as conn:
        return list(conn.execute(insert(episodes).returning(episodes.c.id), rows).scalars())


def test_the_lexicon_read_streams_every_row_in_order_across_chunks(
    repo: Repository, clean: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _episodes(repo, 11)
    monkeypatch.setattr(recall_sql, "LEXICAL_CHUNK", 3)  # 11 rows: four fetches
    store = RecallStore(repo.engine)
    docs = list(store.lexical_docs("agent-s", "user-s", since=T0, vectors=True))
    assert [d.id for d in docs] == ids
    assert [d.session_id for d in docs[:5]] == ["s0"] * 4 + ["s1"]
    assert docs[-1].embedding == to_blob(np.full(4, 11, dtype=np.float32))
    later = list(store.lexical_docs("agent-s", "user-s", since=T0 + timedelta(hours=1, seconds=8)))
    assert [d.id for d in later] == ids[9:]
    # The lexicon built from the stream finds the last row first (the turn before it has its words as
    # context) and holds every row's vector.
    lexicon = Lexicon(store)
    hits = lexicon.search("agent-s", "user-s", "cello", 5)
    assert [ref for _, ref, _ in hits] == [ids[-1], ids[-2]]
    assert set(lexicon.vectors("agent-s", "user-s", [("episode", i) for i in ids])) == {
        ("episode", i) for i in ids
    }


def _memory(repo: Repository, members: list[int], *, open_: bool = True, status: str = "kept") -> int:
    with repo.engine.begin() as conn:
        memory_id = conn.execute(
            insert(semantic_memories).returning(semantic_memories.c.id),
            {
                "agent_id": "agent-s",
                "user_id": "user-s",
                "text": f"a memory of {len(members)} turns",
                "status": status,
                "valid_from": T0,
                "valid_to": None if open_ else T0 + timedelta(days=1),
            },
        ).scalar_one()
        conn.execute(insert(semantic_members), [{"memory_id": memory_id, "episode_id": e} for e in members])
    return int(memory_id)


def test_hydration_gives_each_episode_the_smallest_open_memory_it_is_folded_into(
    repo: Repository, clean: None
) -> None:
    a, b, c, d, e, f = _episodes(repo, 6)
    _memory(repo, [a, b, c])
    _memory(repo, [a, d])  # a is in two open memories: the smaller counts
    _memory(repo, [e], open_=False)  # a closed version folds nothing
    _memory(repo, [f, b], status="cold")  # nor does a cold one
    store = RecallStore(repo.engine)
    got = store.episodes([a, b, c, d, e, f], agent_id="agent-s", user_id="user-s", as_of=None, history=False)
    assert {i: ep.folded_into for i, ep in got.items()} == {a: 2, b: 3, c: 3, d: 2, e: 0, f: 0}
    # Another scope's ids are not hydrated, whatever they are folded into.
    assert store.episodes([a], agent_id="agent-s", user_id="someone-else", as_of=None, history=False) == {}


def _fact(
    repo: Repository, turn_ids: list[str], *, closed: datetime | None = None, retracted: bool = False
) -> None:
    with repo.engine.begin() as conn:
        conn.execute(
            insert(facts),
            {
                "agent_id": "agent-s",
                "user_id": "user-s",
                "entity": f"thing-{'-'.join(turn_ids)}-{closed}-{retracted}",
                "attribute": "colour",
                "value": "red",
                "valid_from": T0,
                "valid_to": closed,
                "retracted_at": T0 + timedelta(days=2) if retracted else None,
                "source": "rule",
                "turn_ids": turn_ids,
            },
        )


def test_an_episode_is_superseded_when_every_fact_it_stated_is_closed_or_retracted_at_as_of(
    repo: Repository, clean: None
) -> None:
    ids = _episodes(repo, 6)
    turn = {i: f"stream-{n}" for n, i in enumerate(ids)}
    a, b, c, d, e, f = ids
    closed = T0 + timedelta(days=1)
    _fact(repo, [turn[a], turn[b]], closed=closed)  # a: its only fact is closed
    _fact(repo, [turn[b]])  # b: one fact closed, one still open
    _fact(repo, [turn[c]], retracted=True)  # c: its only fact was retracted
    _fact(repo, [turn[d]], closed=closed)  # d: closed, and also stated by a retracted fact
    _fact(repo, [turn[d], turn[d]], retracted=True)
    # e: no fact names it; f: only another scope's fact does.
    with repo.engine.begin() as conn:
        conn.execute(
            insert(facts),
            {
                "agent_id": "agent-s",
                "user_id": "someone-else",
                "entity": "x",
                "attribute": "y",
                "value": "z",
                "valid_from": T0,
                "valid_to": closed,
                "source": "rule",
                "turn_ids": [turn[f]],
            },
        )
    store = RecallStore(repo.engine)

    def superseded(as_of: datetime | None) -> dict[int, bool]:
        got = store.episodes(ids, agent_id="agent-s", user_id="user-s", as_of=as_of, history=True)
        return {i: ep.superseded for i, ep in got.items()}

    assert superseded(None) == {a: True, b: False, c: True, d: True, e: False, f: False}
    # Before the closing, the closed facts still held: only what was only ever retracted is superseded.
    assert superseded(closed - timedelta(hours=1)) == {
        a: False,
        b: False,
        c: True,
        d: False,
        e: False,
        f: False,
    }
    # Without history, the superseded ones are left out.
    left = store.episodes(ids, agent_id="agent-s", user_id="user-s", as_of=None, history=False)
    assert sorted(left) == sorted([b, e, f])
