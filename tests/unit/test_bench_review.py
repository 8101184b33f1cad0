"""bench.review: the pure parts of the review bench (texts, safety, log parsing)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.review import (
    Corpus,
    Utterance,
    check_disposable,
    fill,
    parse_locomo,
    round_robin,
    worker_reviews,
)
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError


def sample(sid: str = "conv-1") -> dict[str, Any]:
    return {
        "sample_id": sid,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_2_date_time": "1:56 pm on 8 May, 2023",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "Second session."}],
            "session_10": [{"speaker": "Ann", "dia_id": "D10:1", "text": "Tenth session."}],
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "  "},
            ],
        },
        "observation": {"session_1_observation": {"Ann": [["Ann greeted Bob.", "D1:1"]]}},
        "session_summary": {"session_1_summary": "Ann and Bob met. They talked!  Then left."},
    }


def test_turns_come_in_session_order_with_roles_and_blank_turns_dropped() -> None:
    corpus = parse_locomo([sample()])

    assert [(u.session, u.role, u.content) for u in corpus.turns] == [
        ("session_1", "user", "Hi Bob!"),
        ("session_2", "assistant", "Second session."),
        ("session_10", "user", "Tenth session."),
    ]
    assert [u.content for u in corpus.notes] == [
        "Ann greeted Bob.",
        "Ann and Bob met.",
        "They talked!",
        "Then left.",
    ]


def corpus_of(turns: int, notes: int) -> Corpus:
    return Corpus(
        tuple(Utterance("c", "session_1", "user", f"turn {i}") for i in range(turns)),
        tuple(Utterance("c", "notes", "assistant", f"note {i}") for i in range(notes)),
    )


def test_fill_takes_turns_then_notes_then_varied_repeats_and_says_so() -> None:
    corpus = corpus_of(3, 2)

    only_turns, note1 = fill(corpus, 2)
    assert [u.content for u in only_turns] == ["turn 0", "turn 1"]
    assert note1 == "2 LoCoMo turns"

    texts, note = fill(corpus, 9)
    contents = [u.content for u in texts]
    assert contents[:5] == ["turn 0", "turn 1", "turn 2", "note 0", "note 1"]
    assert contents[5:8] == ["Like I said, turn 0", "Like I said, turn 1", "Like I said, turn 2"]
    assert contents[8] == "Again: turn 0"
    assert len(set(contents)) == 9
    assert (
        note
        == "3 LoCoMo turns + 2 observation/session-summary sentences + 4 turns repeated with a prefix such as 'Like I said, '"
    )


def test_round_robin_interleaves_groups_and_stops_at_n() -> None:
    assert round_robin([[1, 2, 3], [10], [20, 21]], 5) == [1, 10, 20, 2, 21]
    assert round_robin([[1, 2], [10]], 99) == [1, 10, 2]
    assert round_robin([], 3) == []


def test_the_bench_refuses_a_database_or_redis_it_would_wipe_for_real() -> None:
    settings = Settings(
        database_url="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight",
        redis_url="redis://127.0.0.1:6379/0",
    )
    check_disposable(
        "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench", "redis://127.0.0.1:6379/12", settings
    )
    with pytest.raises(ConfigError, match="bench database"):
        check_disposable(
            "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight", "redis://127.0.0.1:6379/12", settings
        )
    with pytest.raises(ConfigError, match="broker"):
        check_disposable(
            "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench",
            "redis://127.0.0.1:6379/0",
            settings,
        )


def test_worker_reviews_pairs_each_review_with_its_task_time() -> None:
    log = "\n".join(
        [
            "Task hindsight.review_batch[a] received",
            '{"batch_id": 1, "kind": "full", "episodes": 30, "embed_ms": 500.0, "write_ms": 40.0, '
            '"event": "review.done", "level": "info"}',
            "Task hindsight.review_batch[a] succeeded in 0.61s: None",
            '{"event": "review.skipped", "batch_id": 2}',
            "Task hindsight.review_batch[b] succeeded in 0.01s: None",
            "{not json",
            '{"batch_id": 3, "kind": "light", "episodes": 2, "event": "review.done"}',
            "[2026-01-01 00:00:00,000: INFO/MainProcess] Task hindsight.review_batch[c] succeeded in 1.5s: None",
        ]
    )

    reviews = worker_reviews(log)

    assert [(e["batch_id"], e["kind"], s) for e, s in reviews] == [(1, "full", 0.61), (3, "light", 1.5)]
    assert reviews[0][0]["write_ms"] == 40.0
