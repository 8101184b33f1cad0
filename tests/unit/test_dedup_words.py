"""De-duplication merges only what says the same words, whatever the embedding says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from pipeline.review import dedup

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _memory(i: int, text: str) -> dedup.Memory:
    v = np.ones(8, dtype=np.float32) / np.sqrt(8)  # every vector the same: cosine 1.0
    return dedup.Memory(i, T0 + timedelta(minutes=i), v, text)


def test_same_words_is_strict_about_a_changed_detail() -> None:
    assert dedup.same_words("I'm allergic to peanuts", "i'm allergic to peanuts!")
    assert not dedup.same_words("Mei: the blue one", "Mei: the red one")
    assert not dedup.same_words("Mei: yes!! twice", "Mei: haha")
    assert dedup.same_words("我对花生过敏", "我对花生过敏！")
    assert not dedup.same_words("我对花生过敏", "我对芒果过敏")


def test_equal_vectors_merge_only_when_the_words_are_the_same() -> None:
    kept = [_memory(1, "Mei: the blue one")]
    batch = [_memory(2, "Mei: the red one"), _memory(3, "Mei: the blue one")]
    plan = dedup.plan(batch, kept, threshold=0.95)
    assert [(m.loser, m.survivor) for m in plan.merges] == [(1, 3)]
    assert plan.max_similarity[2] > 0.99  # similar by vector, still its own memory
