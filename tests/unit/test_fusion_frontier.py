"""The fusion bound (bench/fusion_frontier.py): on score lists small enough to rank by hand, the best fixed
weight, the per-question oracle and the candidate pool are what a person works out, and α = 0.5 ranks exactly
as the simple hybrid floor."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench import fusion_frontier as ff


def _scored(turns: list[tuple[float, float]], evidence: list[int], *, tuned: bool = False) -> ff.Scored:
    """(cosine, BM25) per turn, turn i named t{i}; ties rank in this order, as the floors' stable sort."""
    ids = [f"t{i}" for i in range(len(turns))]
    cos, lex = (np.array(x) for x in zip(*turns, strict=True))
    return ff.Scored(ids, cos, lex, [ids[i] for i in evidence], tuned)


# Twelve turns, one evidence turn, last so that every tie ranks it below the others (at α = 0.5 both
# questions tie all twelve: the evidence is twelfth, out of the top ten).
# BY_LEX: only BM25 finds it; every other turn is the cosine's best. Its score is 1 − α against α: top for
# α < 0.5, last for α >= 0.5.
BY_LEX = _scored([(1.0, 0.0)] * 11 + [(0.0, 1.0)], [11])
# BY_COS: the mirror, α against 1 − α: top for α > 0.5.
BY_COS = _scored([(0.0, 1.0)] * 11 + [(1.0, 0.0)], [11])


def test_minmax_maps_onto_the_unit_interval_and_a_constant_list_onto_zeros() -> None:
    assert ff.minmax(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    flat = ff.minmax(np.array([0.7, 0.7, 0.7], dtype=np.float32))
    assert flat.tolist() == [0.0, 0.0, 0.0]
    assert flat.dtype == np.float32


def test_the_weight_decides_which_list_finds_the_evidence() -> None:
    r = ff.weight_recalls(BY_LEX)
    assert r.shape == (len(ff.ALPHAS), 2)
    found = {float(a) for a, (r5, r10) in zip(ff.ALPHAS, r, strict=True) if r5 == r10 == 1.0}
    lost = {float(a) for a, (r5, r10) in zip(ff.ALPHAS, r, strict=True) if r5 == r10 == 0.0}
    assert found == {float(a) for a in ff.ALPHAS if a < 0.5}
    assert lost == {float(a) for a in ff.ALPHAS if a >= 0.5}


def test_a_fixed_weight_serves_one_of_two_questions_the_per_question_oracle_both() -> None:
    b = ff.bound([BY_LEX, BY_COS])
    assert b.questions == 2
    # every α but 0.5 finds exactly one of the two; on the tie the lowest α is reported
    assert (b.alpha, b.r5, b.r10) == (0.0, 0.5, 0.5)
    assert (b.oracle_r5, b.oracle_r10) == (1.0, 1.0)
    # alone, each finds its own list's weight: the lowest α that finds the evidence
    assert ff.bound([BY_COS]).alpha == 0.55
    assert (ff.bound([BY_COS]).r5, ff.bound([BY_COS]).r10) == (1.0, 1.0)


def test_the_oracle_takes_r5_and_r10_each_at_its_own_weight() -> None:
    # Evidence e1 (t8, BM25's best, middling cosine) and e2 (t12, middling cosine, no BM25 match). Eight
    # turns A are the cosine's best, three D tie e1 on BM25. With a = α: e1 scores 1 − a/2, A a, D 1 − a,
    # e2 a/2. e1 is in the top five while a < 2/3 (above the As); e2 in the top ten only once the Ds fall
    # below it, a > 2/3. No α has both: R@5 / R@10 is 1/2 / 1/2 up to 0.65 and 0 / 1 from 0.70.
    a, d = (1.0, 0.0), (0.0, 1.0)
    q = _scored([a] * 8 + [(0.5, 1.0)] + [d] * 3 + [(0.5, 0.0)], [8, 12])
    r = ff.weight_recalls(q)
    assert all(tuple(r[i]) == ((0.5, 0.5) if ff.ALPHAS[i] <= 0.65 else (0.0, 1.0)) for i in range(len(r)))
    b = ff.bound([q])
    assert (b.oracle_r5, b.oracle_r10) == (0.5, 1.0)
    assert (b.alpha, b.r5, b.r10) == (0.7, 0.0, 1.0)  # chosen by R@10


def test_alpha_one_half_ranks_as_the_simple_hybrid_floor() -> None:
    # Few distinct scores in float32, as the floors' arrays are: many fused scores tie or nearly tie, and the
    # floor's order, ties included, comes back only from a stable sort in the arrays' own precision. The
    # evidence is the floor's fifth and tenth turns, so any other order at either cut changes the recall.
    assert ff.ALPHAS[10] == 0.5
    rng = np.random.default_rng(7)
    ids = [f"t{i}" for i in range(60)]
    for _ in range(300):
        cos = rng.integers(-3, 7, size=60).astype(np.float32) / np.float32(7)
        lex = np.where(rng.random(60) < 0.5, 0, rng.integers(1, 9, size=60) * 1.3).astype(np.float32)
        # bench.quality's hybrid floor: 0.5 minmax(lex) + 0.5 minmax(cos), stable sort
        floor = np.argsort(-(0.5 * ff.minmax(lex) + 0.5 * ff.minmax(cos)), kind="stable")
        evidence = [ids[floor[4]], ids[floor[9]]]
        assert ff.weight_recalls(ff.Scored(ids, cos, lex, evidence))[10].tolist() == [0.5, 1.0]


def test_the_pool_is_the_union_of_both_lists_and_only_bm25_matches_count() -> None:
    # depth 2: the cosine's top two are t0, t1; BM25 matches t3 alone. Evidence t1, t3 in the union, t4 not.
    q = _scored([(0.9, 0.0), (0.8, 0.0), (0.1, 0.0), (0.2, 2.0), (0.3, 0.0)], [1, 3, 4])
    assert ff.pool_share(q, depth=2) == pytest.approx(2 / 3)
    assert ff.pool_share(q, depth=5) == 1.0  # every turn by the cosine
    assert ff.bound([q], depth=2).pool == pytest.approx(2 / 3)
    # A question sharing no word with any turn: the cosine's top two (t0, t2) alone, not BM25's "top two" of
    # zeros (t0, t1 by position), which would hold the evidence t1.
    silent = _scored([(0.9, 0.0), (0.1, 0.0), (0.8, 0.0)], [1])
    assert ff.pool_share(silent, depth=2) == 0.0


def test_the_tuned_half_chooses_the_weight_the_held_out_half_is_measured_at() -> None:
    tuned = ff.Scored(BY_LEX.ids, BY_LEX.cos, BY_LEX.lex, BY_LEX.evidence, tuned=True)
    b = ff.bound([tuned, BY_COS])
    # the tuned question wants BM25 (α = 0), where the held-out one, found by the cosine alone, is lost
    assert (b.tuned_alpha, b.held_out, b.held_out_r5, b.held_out_r10) == (0.0, 1, 0.0, 0.0)
    # no tuned half: nothing measured
    alone = ff.bound([BY_COS])
    assert (alone.tuned_alpha, alone.held_out_r10) == (None, None)


def test_report_lines_give_the_figures_and_the_target() -> None:
    b = ff.bound([BY_LEX, BY_COS])
    lines = ff.report_lines(b, (0.5, 0.6), 0.10)
    assert lines[0].startswith("Fusion bound (optimistic: weights chosen on the answers; not a ranker")
    assert "| best fixed weight, chosen on every answer | 0.00 | 0.500 | 0.500 | 2 |" in lines
    assert "| per-question oracle weight | each its own | 1.000 | 1.000 | 2 |" in lines
    assert "| target: best floor + 0.10 |  | 0.600 | 0.700 |  |" in lines
    assert not any("tuned half" in line for line in lines)  # no question in the tuned half
    assert lines[-1].startswith(
        "Candidate pool: the top 50 turns by cosine and the top 50 BM25 matches hold 1.000 "
    )


def test_no_question_is_an_error() -> None:
    with pytest.raises(ValueError, match="no question"):
        ff.bound([])


def test_the_quality_report_gives_the_bound_after_the_ranker_table() -> None:
    from bench.locomo import Ingested
    from bench.locomo_data import Table
    from bench.quality import EvalSet, SetResult, set_lines

    tables = [Table(n) for n in ("BM25 (floor)", "dense (floor)", "simple hybrid (floor)", "**product**")]
    for t in tables:  # every ranker finds one question's evidence of two: the best floor is 0.5 / 0.5
        t.add("tuned", "single-hop", [("t0",)], ["t0"])
        t.add("held-out", "single-hop", [("t1",)], ["t0"])
    r = SetResult(EvalSet("toy", Path("toy.json"), "none", "a toy"), tables, Ingested(3, True), 2, 1, 1.0, 0)
    assert not any(line.startswith("Fusion bound") for line in set_lines(r))
    lines = set_lines(replace(r, fusion=ff.bound([BY_LEX, BY_COS])))
    start = next(i for i, line in enumerate(lines) if line.startswith("Fusion bound"))
    assert start > max(i for i, line in enumerate(lines) if line.startswith("| **product** |"))
    assert "| target: best floor + 0.10 |  | 0.600 | 0.600 |  |" in lines[start:]
