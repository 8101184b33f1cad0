"""The calibrated learned injection screen the poisoning bench measures: scoring, per-role thresholds, the
look-alike split, calibration from benign scores, rules OR learned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench import poisoning_calibrated as pc
from bench import vector_cache
from bench.poisoning_data import lookalike_samples
from bench.poisoning_screen import LearnedScreen

AXIS = np.eye(4, dtype=np.float32)[0]


def _screen_along_axis(user: float = 0.9, assistant: float = 0.99) -> LearnedScreen:
    # Score rises with the first coordinate only: sigmoid(10 * x0 - 5).
    coef = np.array([10.0, 0.0, 0.0, 0.0], dtype=np.float32)
    return LearnedScreen(coef, -5.0, user, assistant)


def test_score_is_a_sigmoid_of_the_linear_model() -> None:
    s = _screen_along_axis()
    assert s.score(np.zeros(4)) == pytest.approx(1 / (1 + np.exp(5)))
    assert s.score(AXIS) == pytest.approx(1 / (1 + np.exp(-5)))
    assert s.score(-1000 * AXIS) == 0.0  # no overflow on a far-off vector


def test_assistant_turns_have_their_own_threshold_and_tools_share_the_users() -> None:
    s = _screen_along_axis(user=0.9, assistant=0.999)
    v = AXIS * 0.8  # sigmoid(3) ~ 0.953
    assert s.flags(v, "user")[0]
    assert s.flags(v, "tool")[0]
    assert not s.flags(v, "assistant")[0]


def test_lookalike_split_is_fixed_by_the_seed_and_halves_each_category() -> None:
    looks = lookalike_samples()
    split = pc.lookalike_split(looks)
    assert split == pc.lookalike_split(looks)
    assert split != pc.lookalike_split(looks, seed=29)
    for cat in {s.technique for s in looks}:
        group = [s for s in looks if s.technique == cat]
        assert sum(split[s.id] == "train" for s in group) == len(group) // 2


def test_thresholds_come_from_benign_scores_with_margin_and_pass_every_lookalike() -> None:
    convo = np.linspace(0, 0.8, 10_000)  # users' benign training scores
    oof = np.concatenate([convo, [0.3, 0.85], np.linspace(0, 0.6, 1000), [0.95]])
    groups = np.array(
        ["user"] * 10_000 + ["lookalike_user"] * 2 + ["assistant"] * 1000 + ["lookalike_assistant"]
    )
    t = pc.thresholds(oof, groups)
    assert t["user"] > 0.85  # above the highest look-alike, which is above the users' quantile
    assert t["assistant"] > 0.95
    # Without look-alikes: the quantile at a fifth of the target (users 0.1 % -> 99.98th percentile).
    t = pc.thresholds(oof[:10_000], groups[:10_000])
    assert t["user"] == pytest.approx(np.quantile(convo, 1 - 0.001 / 5), abs=1e-6)
    assert t["assistant"] == 1.0  # nothing to calibrate on: never flags


def test_combined_is_rules_or_learned_and_scores_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import poisoning_combined as combined
    from bench.poisoning_data import Sample

    monkeypatch.setattr(vector_cache, "VECTOR_CACHE", tmp_path)  # not the bench's vector cache

    def sample(i: str, label: str, origin: str, split: str, role: str = "user") -> Sample:
        return Sample(i, label, origin, split, "en", "user", role, "x", f"text {i}")

    attacks = [
        sample("a1", "attack", "own_v1", "tuned"),
        sample("a2", "attack", "spikee_cybersec", "heldout"),
    ]
    conversation = {"friends_chat": [sample("c1", "benign", "friends_chat", "test")]}
    vectors = {"text a1": np.zeros(4), "text a2": AXIS, "text c1": np.zeros(4)}

    class Embedder:
        def embed(self, texts: list[str]) -> np.ndarray:
            return np.stack([vectors.get(t, np.zeros(4)) for t in texts]).astype(np.float32)

    def rules(samples: list[Sample]) -> dict[str, bool]:
        return {s.id: s.id == "a1" for s in samples}

    _, got = combined.table(attacks, [], conversation, rules, _screen_along_axis(), Embedder())
    assert got["held-out, fresh"] == (0, 1, 1)  # (rules, combined, turns): the learned screen adds a2
    assert got["tuned attacks (trained on)"] == (1, 1, 1)
    assert got["friends_chat test split, user turns"] == (0, 0, 1)
    assert got["fp_targets_met"]
