"""Memories built on fact chains (issue 27): one per (entity, attribute), saying the current value and what it
replaced. Pure: consolidation.fact_groups, consolidate_review._fact_keys and summarise.fact_statement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from pipeline.core.models import FactCandidate
from pipeline.core.review_records import ChainState, Point
from pipeline.review.consolidate_review import _fact_keys
from pipeline.review.consolidation import fact_groups, plan
from pipeline.review.summarise import fact_statement

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def _point(i: int, turn: str) -> Point:
    v = np.zeros(4, dtype=np.float32)
    v[i % 4] = 1.0
    return Point(i, (turn,), f"turn {turn}", T0 + timedelta(hours=i), v, 0.5)


def _candidate(attribute: str, value: str, turn: str, day: int, *, correction: bool = False) -> FactCandidate:
    return FactCandidate(
        "user", attribute, value, T0 + timedelta(days=day), "user", 0.8, (turn,), correction=correction
    )


def test_a_value_said_twice_or_one_that_replaced_another_is_a_memory_one_said_once_is_not() -> None:
    points = [_point(i, f"t{i}") for i in range(5)]
    home = ChainState("user", "location", "Shanghai", T0)
    budget = ChainState("user", "budget:offsite", "80,000 yuan", T0, "50,000 yuan", T0)
    dog = ChainState("user", "name", "Biscuit", T0)
    facts = {
        home.key: (home, {"t0", "t1"}),
        budget.key: (budget, {"t2"}),
        dog.key: (dog, {"t3"}),
        "gone": (ChainState("user", "employer", "Acme", T0), {"t-not-a-point", "t-neither"}),
    }
    groups = dict((s.key, g) for s, g in fact_groups(points, facts))
    assert groups == {home.key: (0, 1), budget.key: (2,)}


def test_a_newer_statement_moves_the_chain_and_the_memory_says_what_it_replaced() -> None:
    stored = ChainState("user", "budget:offsite", "50,000 yuan", T0)
    keys = _fact_keys([(stored, ("t-old",))], [_candidate("budget:offsite", "80,000 yuan", "t-new", 30)])
    assert list(keys) == ["user/budget:offsite=80,000 yuan"]
    state, turns = keys["user/budget:offsite=80,000 yuan"]
    assert turns == {"t-new"}
    assert (state.previous, state.until) == ("50,000 yuan", T0 + timedelta(days=30))
    assert fact_statement(state) == "The offsite budget is 80,000 yuan (was 50,000 yuan until 2026-05-31)."


def test_an_older_statement_is_history_and_a_correction_says_no_was() -> None:
    stored = ChainState("user", "location", "Shanghai", T0 + timedelta(days=10))
    older = _fact_keys([(stored, ("t1",))], [_candidate("location", "Hangzhou", "t0", 1)])
    assert list(older) == [stored.key]
    assert older[stored.key][1] == {"t1"}
    fixed = _fact_keys([(stored, ("t1",))], [_candidate("location", "Suzhou", "t2", 20, correction=True)])
    ((state, turns),) = fixed.values()
    assert (state.value, state.previous, turns) == ("Suzhou", None, {"t2"})
    assert fact_statement(state) == "The user lives in Suzhou."


def test_the_same_value_in_another_casing_joins_its_chain() -> None:
    stored = ChainState("user", "location", "Hangzhou", T0)
    keys = _fact_keys([(stored, ("t1",))], [_candidate("location", "hangzhou", "t2", 5)])
    assert keys == {stored.key: (stored, {"t1", "t2"})}


def test_a_fact_memory_carries_its_chain_into_the_plan() -> None:
    points = [_point(i, f"t{i}") for i in range(4)]
    state = ChainState("user", "location", "Shanghai", T0)
    result = plan(points, [[0, 1], [2, 3]], [], match_cosine=0.9, facts=[state])
    by_members = {m.members: m.fact for m in result.memories}
    assert by_members == {(0, 1): state, (2, 3): None}


def test_statements_read_as_sentences_for_keyed_and_unknown_attributes() -> None:
    assert (
        fact_statement(ChainState("user", "preference:green_tea", "likes", T0)) == "The user likes green tea."
    )
    assert fact_statement(ChainState("user", "language", "german", T0)) == "The user's language is German."
    assert (
        fact_statement(ChainState("alice", "favourite_colour", "blue", T0))
        == "alice's favourite colour is blue."
    )
