"""The consolidation bound (bench/consolidation_frontier.py): on similarities small enough to work out by hand,
the best cut it reports is the one a person finds, and a cut that groups nothing never counts as pure."""

from __future__ import annotations

import numpy as np
import pytest

from bench.consolidation_frontier import bound, char_ngrams, groups_at


def test_two_clear_topics_are_reachable_by_one_cut() -> None:
    ids = ["a1", "a2", "b1", "b2"]
    s = np.array([[1, 0.9, 0.1, 0.1], [0.9, 1, 0.1, 0.1], [0.1, 0.1, 1, 0.8], [0.1, 0.1, 0.8, 1]])
    found = bound("toy", [(ids, s)], {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}, steps=9)
    assert found.reachable
    assert found.at_purity is not None
    assert (found.at_purity.purity.hits, found.at_purity.purity.total) == (2, 2)
    assert found.at_purity.completeness.value == 1.0
    # every cut between the two topics' similarities and the cross similarity separates them
    assert 0.1 < found.at_purity.threshold <= 0.8


def test_a_near_miss_closer_than_the_paraphrase_makes_the_targets_unreachable() -> None:
    # a2 is a paraphrase of a1 but b (another topic) is far closer to a1: no cut groups a1 with a2 alone
    ids = ["a1", "a2", "b"]
    s = np.array([[1, 0.5, 0.9], [0.5, 1, 0.5], [0.9, 0.5, 1]])
    found = bound("toy", [(ids, s)], {"a1": "A", "a2": "A", "b": "B"}, steps=5, linkages=("average",))
    assert not found.reachable
    assert found.at_purity is None  # the one grouping cut above 0.5 pairs a1 with b: purity 0
    assert found.at_completeness is not None  # only all three together keep a1 with a2
    assert found.at_completeness.purity.hits == 1
    assert found.at_completeness.purity.total == 3


def test_distractors_pair_impurely_and_scopes_never_mix() -> None:
    s = np.array([[1, 0.9], [0.9, 1]])
    found = bound(
        "toy", [(["x", "y"], s), (["z", "w"], s)], {"x": "T", "y": None, "z": "T", "w": "T"}, steps=3
    )
    # the only grouping cut pairs x-y (impure: y is a distractor) and z-w (pure): purity 1/2
    assert found.at_purity is None
    # x shares topic T with z and w, but they are in another scope: at most 1 of 3 pairs can share a group
    assert found.at_completeness is None


@pytest.mark.parametrize("linkage", ["single", "average", "complete"])
def test_groups_at_merges_only_at_or_above_the_threshold(linkage: str) -> None:
    s = np.array([[1, 0.7, 0.2], [0.7, 1, 0.2], [0.2, 0.2, 1]])
    assert groups_at(s, linkage, 0.7) == [[0, 1]]
    assert groups_at(s, linkage, 0.71) == []
    assert groups_at(s, linkage, 0.2) == [[0, 1, 2]]


def test_character_ngrams_read_chinese_paraphrases() -> None:
    s = char_ngrams(["我对海鲜过敏", "海鲜过敏，虾不能吃", "下周去云南旅行"])
    assert s[0, 1] > s[0, 2]
    assert np.allclose(np.diag(s), 1.0)
