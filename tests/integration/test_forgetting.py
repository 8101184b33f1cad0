"""Forgetting through the real pipeline: decay to cold storage, re-heating, soft and hard forget, audit."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.decay_sql import run_decay
from pipeline.adapters.postgres.recall_sql import RecallStore
from pipeline.core.ports import WarmEmbedder
from pipeline.core.vector_ids import point_id
from pipeline.forgetting.decay import DecayParams
from pipeline.recall.hybrid import DEFAULT_TUNING, recall
from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T1 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
TURNS = [
    ("I'm allergic to peanuts, never suggest anything with them.", {"core": True}),
    ("I don't like long answers.", {}),
    ("Please keep it short.", {}),
    ("Your replies are too wordy.", {}),
    ("My dentist appointment moved to Tuesday at 3pm.", {}),
    ("Our cat is called Miso and she is twelve.", {}),
]


def _rows(stack: Stack, sql: str, **params: object) -> list[tuple[Any, ...]]:
    with stack.repo.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params)]


def _recall(stack: Stack, q: str, **params: Any) -> list[dict[str, Any]]:
    response = stack.api.get("/v1/recall", params={"q": q, "agent_id": "agent-a", "user_id": "zoe", **params})
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def _settle(stack: Stack) -> None:
    wait_until(lambda: stack.repo.outbox_lag()[0] == 0, timeout=30, what="the outbox to drain")


def _found_by_bm25(stack: Stack, q: str, turn_id: str) -> bool:
    """The hit of `turn_id` was a lexical candidate too, not only a vector hit."""
    hit = next((h for h in _recall(stack, q) if h["source_turn_ids"] == [turn_id]), None)
    return hit is not None and hit["explain"]["lexical"] is not None


@pytest.fixture
def scope(stack: Stack) -> dict[str, str]:
    """A reviewed scope: a core allergy, three paraphrases folded into a semantic memory, two plain facts."""
    stack.start_scheduler()
    ids = [
        stack.client.write_memory(
            "agent-a", "zoe", "s1", "user", c, ts=T1 + timedelta(minutes=i), metadata=m, turn_id=f"z-{i}"
        )
        for i, (c, m) in enumerate(TURNS)
    ]
    stack.client.end_session("agent-a", "zoe", "s1")
    stack.wait_indexed(ids)
    stack.full_review("agent-a", "zoe")
    _settle(stack)
    assert _rows(stack, "SELECT count(*) FROM semantic_memories WHERE valid_to IS NULL") == [(1,)]
    return {r[0]: f"episode:{r[1]}" for r in _rows(stack, "SELECT turn_id, id FROM episodes")}


def test_sixty_idle_days_send_unused_memories_cold_but_not_the_core_allergy(
    stack: Stack, scope: dict[str, str]
) -> None:
    report = run_decay(stack.repo.engine, datetime.now(UTC) + timedelta(days=60), DecayParams())
    _settle(stack)
    assert report.went_cold >= 4
    status = dict(_rows(stack, "SELECT turn_id, status FROM episodes"))
    assert status.pop("z-0") == "kept"  # core: exempt
    assert set(status.values()) == {"cold"}
    assert _rows(stack, "SELECT status FROM semantic_memories WHERE valid_to IS NULL") == [("cold",)]
    assert _rows(stack, "SELECT weight FROM episodes WHERE turn_id = 'z-0'") == [(1.0,)]
    # Hot recall now has only the allergy, and it is the top hit.
    hits = _recall(stack, "what food should I avoid?")
    assert hits[0]["source_turn_ids"] == ["z-0"]
    assert {t for h in hits for t in h["source_turn_ids"]} == {"z-0"}
    assert stack.index.ids() == stack.repo.indexable_point_ids()

    # Explicitly recalling a cold memory finds it in cold storage and re-heats it.
    cold = _recall(stack, "what is the cat called", include_cold=True)
    cat = next(h for h in cold if h["source_turn_ids"] == ["z-5"])
    assert cat["cold"] is True
    _settle(stack)
    assert _rows(stack, "SELECT status, weight, cold_reason FROM episodes WHERE turn_id = 'z-5'") == [
        ("kept", 1.0, None)
    ]
    assert _recall(stack, "what is the cat called")[0]["source_turn_ids"] == ["z-5"]
    # The lexicon was built while it was cold; a top-up (restored_at) brings it back to BM25 too.
    wait_until(lambda: _found_by_bm25(stack, "cat Miso", "z-5"), timeout=15, what="BM25 to find z-5 again")


def test_a_decay_pass_over_parallel_connections_in_one_id_chunk_each_misses_nothing(
    stack: Stack, scope: dict[str, str]
) -> None:
    (lo, hi), (mlo, mhi) = (
        _rows(stack, f"SELECT min(id), max(id) FROM {table}")[0]
        for table in ("episodes", "semantic_memories")
    )
    report = run_decay(
        stack.repo.engine, datetime.now(UTC) + timedelta(days=60), DecayParams(), chunk=1, parallel=3
    )
    assert report.chunks == (hi - lo + 1) + (mhi - mlo + 1)
    cold_rows = _rows(stack, "SELECT count(*) FROM episodes WHERE status = 'cold' AND cold_reason = 'decay'")
    assert report.by_kind["episode"]["cold"] == cold_rows[0][0] == len(scope) - 1  # all but the core allergy
    assert report.by_kind["semantic"]["cold"] == 1
    assert report.queued == report.went_cold == len(scope)
    _settle(stack)
    assert stack.index.ids() == stack.repo.indexable_point_ids()


def test_decay_lowers_a_memory_in_the_ranking_only_as_far_as_the_setting_says(
    stack: Stack, scope: dict[str, str], embedder: WarmEmbedder
) -> None:
    run_decay(stack.repo.engine, datetime.now(UTC) + timedelta(days=20), DecayParams())
    _settle(stack)
    (weight,) = _rows(stack, "SELECT weight FROM episodes WHERE turn_id = 'z-5'")[0]
    assert 0.3 < weight < 0.4  # 20 idle days at 0.05 a day, still hot
    # At 1 (DESIGN §2's relevance x weight) the decay counts in full. (Asked first: the API's recall
    # records an access, which warms the memory back to its base weight.)
    store = RecallStore(stack.repo.engine)
    hits = recall(
        "what is the cat called",
        agent_id="agent-a",
        user_id="zoe",
        k=5,
        repo=stack.repo,
        store=store,
        index=stack.index,
        embedder=embedder,
        lexicon=Lexicon(store),
        tuning=replace(DEFAULT_TUNING, decay_exponent=1.0),
    )
    (full,) = [h for h in hits if h.source_turn_ids == ("z-5",)]
    assert full.explain is not None
    assert full.explain["weight"] == pytest.approx(weight, abs=1e-6)  # explain rounds to 6 decimals
    # Default (recall.decay_exponent unset: 0): ranked at its base weight, the decayed weight reported.
    (cat,) = [h for h in _recall(stack, "what is the cat called") if h["source_turn_ids"] == ["z-5"]]
    assert cat["weight"] == pytest.approx(weight, abs=1e-6)  # the API rounds to 6 decimals too
    assert cat["explain"]["weight"] == 1.0
    assert full.score == pytest.approx(cat["score"] * weight, rel=1e-3)


def test_recall_hits_refresh_last_access_off_the_request_path(stack: Stack, scope: dict[str, str]) -> None:
    hits = _recall(stack, "what is the cat called")
    assert hits[0]["source_turn_ids"] == ["z-5"]
    assert _rows(stack, "SELECT access_count FROM episodes WHERE turn_id = 'z-5'") == [
        (0,)
    ]  # not yet: batched
    wait_until(
        lambda: _rows(stack, "SELECT access_count FROM episodes WHERE turn_id = 'z-5'") == [(1,)],
        timeout=10,
        what="the access recorder to flush",
    )
    (last,) = _rows(stack, "SELECT last_accessed FROM episodes WHERE turn_id = 'z-5'")[0]
    assert last is not None


def test_soft_forget_is_reversible_and_audited(stack: Stack, scope: dict[str, str]) -> None:
    cat = scope["z-5"]
    body = {"agent_id": "agent-a", "user_id": "zoe", "reason": "user asked", "actor": "support"}
    assert stack.api.post(f"/v1/memories/{cat}/forget", json=body).json()["mode"] == "soft"
    _settle(stack)
    assert "z-5" not in {t for h in _recall(stack, "what is the cat called") for t in h["source_turn_ids"]}
    response = stack.api.patch(f"/v1/memories/{cat}", json={**body, "status": "kept", "reason": "undo"})
    assert response.json()["before"] == {"status": "forgotten"}
    _settle(stack)
    assert _recall(stack, "what is the cat called")[0]["source_turn_ids"] == ["z-5"]
    wait_until(lambda: _found_by_bm25(stack, "cat Miso", "z-5"), timeout=15, what="BM25 to find z-5 again")
    audit = _rows(stack, "SELECT actor, reason, action, changes FROM memory_audit ORDER BY id")
    assert [(a, r, act) for a, r, act, _ in audit] == [
        ("support", "user asked", "update"),
        ("support", "undo", "update"),
    ]
    # The audit listing shows the caller's actor beside the key: none, the API runs keyless here.
    listed = stack.api.get("/v1/audit", params={"agent_id": "agent-a", "user_id": "zoe"}).json()["audit"]
    assert [(a["actor"], a["key"], a["memory_id"]) for a in listed] == [("support", "keyless", cat)] * 2
    # Someone else's scope cannot touch it.
    other = stack.api.post(f"/v1/memories/{cat}/forget", json={**body, "user_id": "mallory"})
    assert other.status_code == 404


def test_hard_forget_leaves_no_trace(stack: Stack, scope: dict[str, str]) -> None:
    memory_before = _rows(stack, "SELECT id FROM semantic_memories WHERE valid_to IS NULL")
    wordy = scope["z-3"]
    body = {"agent_id": "agent-a", "user_id": "zoe", "hard": True, "reason": "GDPR erasure request"}
    result = stack.api.post(f"/v1/memories/{wordy}/forget", json=body).json()
    assert result["purged"]["episodes"] == 1
    _settle(stack)
    ref = int(wordy.split(":")[1])
    assert _rows(stack, "SELECT count(*) FROM episodes WHERE turn_id = 'z-3' OR id = :i", i=ref) == [(0,)]
    assert _rows(stack, "SELECT count(*) FROM facts WHERE 'z-3' = ANY(turn_ids)") == [(0,)]
    assert _rows(stack, "SELECT count(*) FROM episodes WHERE 'z-3' = ANY(merged_turn_ids)") == [(0,)]
    assert _rows(stack, "SELECT count(*) FROM semantic_members WHERE episode_id = :i", i=ref) == [(0,)]
    assert point_id("episode", ref) not in stack.index.ids()
    for hit in _recall(stack, "how long should answers be", k=20):
        assert "z-3" not in hit["source_turn_ids"]
    # The audit log says who and why, and keeps no content.
    (changes,) = _rows(stack, "SELECT changes FROM memory_audit WHERE action = 'hard_forget'")[0]
    assert "wordy" not in str(changes)
    # The semantic memory kept its other members; had it no support left it would be gone too.
    assert _rows(stack, "SELECT id FROM semantic_memories WHERE valid_to IS NULL") == memory_before
    for turn in ("z-1", "z-2"):
        stack.api.post(f"/v1/memories/{scope[turn]}/forget", json={**body, "reason": "erase"})
    _settle(stack)
    assert _rows(stack, "SELECT count(*) FROM semantic_memories") == [(0,)]
    assert stack.index.ids() == stack.repo.indexable_point_ids()
