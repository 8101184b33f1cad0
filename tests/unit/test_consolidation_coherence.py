"""pipeline.review.consolidation: a semantic memory never joins turns about different facts (issue 27). Pure."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from pipeline.core.review_records import OpenMemory, Point
from pipeline.review.consolidation import centroid, clusterable, coherent, plan

T0 = datetime(2026, 6, 1, tzinfo=UTC)
BUDGET, HOME = "offsite/budget", "user/location"


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


# Budget turns point one way, residence turns another; all close enough for cosine to cluster them.
VECTORS = np.stack(
    [
        _unit(1.0, 0.3, 0.0),  # 0 budget 50,000
        _unit(1.0, 0.35, 0.0),  # 1 budget 80,000
        _unit(0.9, 0.3, 0.1),  # 2 "we need to book the venue soon" (no fact, budget-like)
        _unit(0.6, 1.0, 0.0),  # 3 I live in Hangzhou
        _unit(0.6, 1.0, 0.1),  # 4 I moved to Shanghai
        _unit(0.5, 1.0, 0.0),  # 5 "the flat is near the metro" (no fact, residence-like)
    ]
)
ABOUT = [
    frozenset({BUDGET}),
    frozenset({BUDGET}),
    frozenset(),
    frozenset({HOME}),
    frozenset({HOME}),
    frozenset(),
]


def test_a_cluster_mixing_two_attributes_is_split_and_factless_turns_follow_the_nearest() -> None:
    assert coherent([[0, 3, 1, 4, 2, 5]], ABOUT, VECTORS, min_size=2) == [[0, 1, 2], [3, 4, 5]]


def test_a_part_below_the_minimum_is_no_memory() -> None:
    # Only one residence turn: the budget part stands, the residence turn stays an episode of its own.
    about = [*ABOUT[:3], frozenset({HOME}), frozenset(), frozenset()]
    out = coherent([[0, 1, 2, 3]], about, VECTORS, min_size=2)
    assert out == [[0, 1, 2]]


def test_a_cluster_about_one_attribute_or_none_stays_whole_in_its_order() -> None:
    assert coherent([[2, 1, 0]], ABOUT, VECTORS, min_size=2) == [[2, 1, 0]]
    assert coherent([[5, 2]], ABOUT, VECTORS, min_size=2) == [[5, 2]]


def test_a_turn_stating_two_facts_goes_with_the_attribute_most_of_the_cluster_shares() -> None:
    about = [
        frozenset({BUDGET}),
        frozenset({BUDGET, HOME}),
        frozenset(),
        frozenset({HOME}),
        frozenset(),
        frozenset(),
    ]
    # In cluster [0, 1, 3]: budget twice, home twice -> ties go to the name first in order (budget).
    assert coherent([[0, 1, 3, 4]], about, VECTORS, min_size=1) == [[0, 1], [3, 4]]


def test_a_memorys_old_members_of_another_attribute_do_not_come_back_as_sticky_members() -> None:
    points = [Point(i, (f"t{i}",), f"text {i}", T0, VECTORS[i], 0.5) for i in range(6)]
    mixed = OpenMemory(99, frozenset({0, 1, 3, 4}), centroid(VECTORS[[0, 1, 3, 4]]))
    about = {i: a for i, a in enumerate(ABOUT) if a}

    out = plan(points, [[0, 1, 2]], [mixed], match_cosine=0.9, about=about)

    (memory,) = out.memories
    assert memory.replaces == 99
    assert sorted(memory.members) == [0, 1, 2]  # 3 and 4 (residence) are not carried over
    # Without the facts known, the old members stay, as before.
    (legacy,) = plan(points, [[0, 1, 2]], [mixed], match_cosine=0.9).memories
    assert sorted(legacy.members) == [0, 1, 2, 3, 4]


def test_a_member_another_cluster_took_is_not_carried_over_as_sticky() -> None:
    points = [Point(i, (f"t{i}",), f"text {i}", T0, VECTORS[i], 0.5) for i in range(6)]
    old = OpenMemory(99, frozenset({0, 1, 3}), centroid(VECTORS[[0, 1, 3]]))

    out = plan(points, [[0, 1, 2], [3, 4, 5]], [old], match_cosine=0.99)

    by_size = {m.replaces: sorted(m.members) for m in out.memories}
    assert by_size[99] == [0, 1, 2]  # 3 went to the other cluster this time: not kept here as well
    assert by_size[None] == [3, 4, 5]
    homes = [m for m in out.memories if 3 in m.members]
    assert len(homes) == 1
    # a member no cluster took this time still stays with its memory
    (kept,) = [m for m in plan(points, [[0, 1, 2]], [old], match_cosine=0.99).memories if m.replaces == 99]
    assert sorted(kept.members) == [0, 1, 2, 3]


def test_turns_written_mostly_in_cjk_are_clustered_only_by_a_model_that_reads_them() -> None:
    texts = [
        "I'm allergic to peanuts.",
        "我对海鲜过敏，尤其是虾",
        "团子今天打完疫苗了，有点蔫",
        "帮我订 flights to Tokyo 下周三",  # 6 CJK characters, 3 Latin words: mostly CJK
        "Book the 高铁 to Shanghai for Friday morning please",  # mostly English
        "ok",
    ]
    points = [Point(i, (f"t{i}",), t, T0, VECTORS[i], 0.5) for i, t in enumerate(texts)]

    assert clusterable(points, set(), cjk=False) == [0, 4, 5]
    assert clusterable(points, {0}, cjk=False) == [4, 5]
    assert clusterable(points, {0}, cjk=True) == [1, 2, 3, 4, 5]


def test_an_open_memory_wholly_inside_a_new_cluster_is_absorbed_not_left_open_beside_it() -> None:
    points = [Point(i, (f"t{i}",), f"text {i}", T0, VECTORS[i], 0.5) for i in range(6)]
    big = OpenMemory(98, frozenset({0, 1, 2}), centroid(VECTORS[[0, 1, 2]]))
    small = OpenMemory(99, frozenset({3, 4}), centroid(VECTORS[[3, 4]]))

    (memory,) = plan(points, [[0, 1, 2, 3, 4]], [big, small], match_cosine=0.99).memories

    assert memory.replaces == 98  # the memory sharing most members goes on as its new version
    assert memory.absorbs == (99,)  # the other, all of whose turns it now holds, closes with it
    # one sharing only part of its members with the cluster is no part of it: it stays as it is
    partial = OpenMemory(99, frozenset({4, 5}), centroid(VECTORS[[4, 5]]))
    (memory,) = plan(points, [[0, 1, 2, 3, 4]], [big, partial], match_cosine=0.99).memories
    assert memory.absorbs == ()
    # an identical cluster that swallowed another memory is written again, so that the other can close
    out = plan(points, [[0, 1, 2]], [big, OpenMemory(97, frozenset({1, 2}), VECTORS[1])], match_cosine=0.99)
    assert out.unchanged == ()
    assert [m.absorbs for m in out.memories] == [(97,)]


def test_a_memory_written_before_coherence_was_judged_is_versioned_not_confirmed() -> None:
    """Issue 40: an open memory from before migration 0022 is not coherent, so recall never returns it; the
    same cluster found again writes its next version (coherent, with its stated members)."""
    points = [Point(i, (f"t{i}",), f"text {i}", T0, VECTORS[i], 0.5) for i in range(6)]
    members = frozenset({0, 1, 2})
    confirmed = plan(
        points, [[0, 1, 2]], [OpenMemory(7, members, centroid(VECTORS[[0, 1, 2]]))], match_cosine=0.99
    )
    assert (confirmed.unchanged, confirmed.memories) == ((7,), ())
    old = OpenMemory(7, members, centroid(VECTORS[[0, 1, 2]]), coherent=False)
    versioned = plan(points, [[0, 1, 2]], [old], match_cosine=0.99)
    assert versioned.unchanged == ()
    assert [(m.replaces, sorted(m.members)) for m in versioned.memories] == [(7, [0, 1, 2])]
