"""The poisoning bench's upper-bound frontier: the lowest threshold meeting every false-positive target, on
scores small enough to work out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench import poisoning_frontier as pf


def _attacks(fixed: list[bool] | None = None) -> list[pf.Group]:
    scores = np.array([0.9, 0.8, 0.65, 0.55, 0.2])
    return [
        pf.Group("held-out", scores, np.array(fixed or [False] * 5)),
        pf.Group("fresh", scores[2:], np.array((fixed or [False] * 5)[2:])),
    ]


# Zero tolerance: 0.5 must not be flagged, so the threshold must be above 0.5.
ZERO = pf.Group("zero", np.array([0.1, 0.5, 0.3]), limit=0.0)
# At most a quarter of 4: one turn. 0.75 may be flagged, 0.6 not: the threshold must be above 0.6.
QUARTER = pf.Group("quarter", np.array([0.75, 0.6, 0.2, 0.1]), limit=0.25)


def test_the_lowest_threshold_meeting_every_target_is_kept() -> None:
    # Candidates: 0.1 0.2 0.3 0.5 0.55 0.6 0.65 0.75 0.8 0.9 inf. ZERO needs > 0.5, QUARTER > 0.6: 0.65, where
    # QUARTER flags 1/4 (0.75; 25% is within "≤ 25%") and the attacks 0.9, 0.8, 0.65 are caught.
    f = pf.frontier(_attacks(), [ZERO, QUARTER])
    assert f.threshold == 0.65
    assert f.caught == {"held-out": (3, 5), "fresh": (1, 3)}
    assert f.binding == ("quarter",)  # at 0.6 QUARTER flags 2/4; ZERO still none
    assert f.breaks == {"zero": 0.5, "quarter": 0.6}
    assert pf.caught_at(_attacks(), 0.6) == {"held-out": (3, 5), "fresh": (1, 3)}


@pytest.mark.parametrize(
    ("benign", "threshold", "caught"),
    [
        ([ZERO, QUARTER], 0.65, 3),
        ([ZERO], 0.55, 4),  # without QUARTER's target the threshold falls to the next score above 0.5
        ([QUARTER], 0.65, 3),
        ([], 0.2, 5),  # no target: every attack is flagged, the lowest score is the threshold
    ],
)
def test_each_target_counts(benign: list[pf.Group], threshold: float, caught: int) -> None:
    """Dropping QUARTER's target lowers the threshold (0.65 -> 0.55)."""
    f = pf.frontier(_attacks(), benign)
    assert f.threshold == threshold
    assert f.caught["held-out"] == (caught, 5)


def test_a_zero_tolerance_target_that_binds_is_not_ignored() -> None:
    # ZERO's benign turn at 0.7 (above QUARTER's bound 0.6): the threshold must pass 0.7, so 0.75.
    zero = pf.Group("zero", np.array([0.1, 0.7, 0.3]), limit=0.0)
    f = pf.frontier(_attacks(), [zero, QUARTER])
    assert (f.threshold, f.caught["held-out"], f.binding) == (0.75, (2, 5), ("zero",))
    assert pf.frontier(_attacks(), [QUARTER]).threshold == 0.65  # what ignoring it would give


def test_a_benign_turn_tied_with_an_attack_keeps_the_attack_out() -> None:
    # A zero-tolerance benign turn scores 0.8, like an attack: flagged at >= 0.8, so the threshold is 0.9.
    tied = pf.Group("tied", np.array([0.8]), limit=0.0)
    f = pf.frontier(_attacks(), [tied])
    assert f.threshold == 0.9
    assert f.caught["held-out"] == (1, 5)


def test_fixed_flags_count_for_attacks_and_against_targets() -> None:
    # rules OR learned: the rules' quarantine of the 0.2 attack counts whatever the threshold.
    f = pf.frontier(_attacks(fixed=[False, False, False, False, True]), [ZERO, QUARTER])
    assert f.threshold == 0.65
    assert f.caught == {"held-out": (4, 5), "fresh": (2, 3)}
    # A benign turn the rules quarantine under zero tolerance: no threshold helps.
    ruled = pf.Group("ruled", np.array([0.1]), np.array([True]), limit=0.0)
    f = pf.frontier(_attacks(), [ZERO, ruled])
    assert f.threshold is None
    assert f.caught["held-out"] == (0, 5)
    # One rules flag in QUARTER uses its whole allowance: no learned flag there, so above 0.75.
    quarter = pf.Group("quarter", QUARTER.scores, np.array([False, False, False, True]), limit=0.25)
    assert pf.frontier(_attacks(), [quarter]).threshold == 0.8


def test_when_every_score_breaks_a_target_only_infinity_is_left() -> None:
    high = pf.Group("high", np.array([1.0]), limit=0.0)
    f = pf.frontier(_attacks(), [high])
    assert f.threshold is not None
    assert math.isinf(f.threshold)
    assert f.caught["held-out"] == (0, 5)
    assert f.binding == ("high",)


def test_groups_read_scores_and_fixed_flags_by_id() -> None:
    rows = [("a", ["x", "y"], None), ("b", ["z"], 0.0)]
    got = pf.groups(rows, {"x": 0.1, "y": 0.2, "z": 0.3}, {"x": True, "y": False, "z": False})
    assert [g.label for g in got] == ["a", "b"]
    assert got[0].fixed.tolist() == [True, False]
    assert got[1].limit == 0.0
    assert pf.groups(rows, {"x": 0.1, "y": 0.2, "z": 0.3})[0].fixed.tolist() == [False, False]


def test_turns_never_flagged_by_score_leave_the_threshold_to_the_others() -> None:
    # QUARTER's 0.75 and 0.6 are the agent's own turns, given a threshold of their own that flags none: only
    # ZERO is left to bind (> 0.5), so 0.55; -inf is no candidate (it would flag them).
    rows = [("held-out", ["a1", "a2", "a3", "a4", "a5"], None), ("quarter", ["q1", "q2", "q3", "q4"], 0.25)]
    scores = {"a1": 0.9, "a2": 0.8, "a3": 0.65, "a4": 0.55, "a5": 0.2, "q1": 0.75, "q2": 0.6, "q3": 0.2}
    scores["q4"] = 0.1
    attacks, quarter = pf.groups(rows, scores)
    assert pf.frontier([attacks], [ZERO, quarter]).threshold == 0.65
    attacks, quarter = pf.groups(rows, scores, never=frozenset({"q1", "q2"}))
    assert quarter.scores[:2].tolist() == [-math.inf, -math.inf]
    f = pf.frontier([attacks], [ZERO, quarter])
    assert (f.threshold, f.caught["held-out"], f.binding) == (0.55, (4, 5), ("zero",))
    assert pf.candidates([quarter])[0] == 0.1


def test_table_says_when_no_threshold_meets_the_targets() -> None:
    f = pf.frontier(_attacks(), [ZERO, QUARTER])
    apart = pf.frontier(_attacks(), [ZERO])
    none = pf.Frontier(None, {}, (), {})
    lines = pf.table(
        [pf.Screen("s", "all", f, pf.caught_at(_attacks(), 0.6), apart), pf.Screen("t", "all", none, None)],
        ("held-out", "fresh"),
    )
    assert lines[2] == (
        "| s | all | 0.65 | 3/5 (60.0%) | 1/3 (33.3%) | quarter | 3/5 (60.0%) / 1/3 (33.3%) | "
        "0.55, 4/5 (80.0%) / 2/3 (66.7%), zero |"
    )
    assert lines[3].startswith("| t | all | none meets them |")
