"""What any weighting of the two floor lists could reach: an optimistic bound on score fusion.

`hindsight bench quality` scores a simple hybrid floor, 0.5 min-max(BM25) + 0.5 min-max(cosine) over every
turn of the question's conversation, and asks the product to beat the best floor by `MARGIN`. Before tuning
a fusion towards that target, this asks whether fusing those two lists could get there at all. On the
same arrays the floors rank (`bench.quality.floors`), for score = α·min-max(cosine) + (1 − α)·min-max(BM25)
with α on a grid:
- the best fixed α, chosen on every question's answers;
- the per-question oracle: each question at the α best for it (R@5 and R@10 apart), the ceiling of any
  query-adaptive linear fusion of the two lists on the grid, whatever predicts the weight;
- the candidate pool: the evidence in the union of the top `POOL` by cosine and by BM25, the most any
  reranker of those candidates could recall.

The weights are chosen by reading the answers, so these are upper bounds, not rankers: where the oracle misses
the target, no weighting of these two lists reaches it, and the way forward is a better list or a reranker
(of more than the pool, if the pool misses it too). Beside them, one honest figure: the fixed α chosen on
the tuned half, measured on the held-out half.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.locomo_data import K, recall_at_k

# The weight on the cosine: 0, 0.05, ..., 1 (0.5 exactly, so that it ranks as the simple hybrid floor).
ALPHAS = np.arange(21) / 20
POOL = 50  # candidates taken from each list for the pool

Array = np.ndarray[Any, Any]


@dataclass(frozen=True, slots=True)
class Scored:
    """One question: every turn of its conversation scored by each list, and its evidence."""

    ids: Sequence[str]  # turn ids, in the conversation's order (ties keep it, as the floors' do)
    cos: Array  # cosine of the configured embedder, per turn
    lex: Array  # BM25, per turn; 0: the turn shares no term with the question
    evidence: Sequence[str]
    tuned: bool = False  # in the half that may be tuned on


@dataclass(frozen=True, slots=True)
class FusionBound:
    questions: int
    alpha: float  # the fixed weight with the best mean R@10 over every question (optimistic)
    r5: float
    r10: float
    oracle_r5: float  # each question at its own best α for R@5
    oracle_r10: float  # ... and, apart, for R@10
    pool: float  # mean share of a question's evidence in the union of the top `depth` by each list
    depth: int = POOL
    # The fixed α chosen on the tuned half and scored on the held-out half: a measurement, not a bound.
    # None when a half has no question.
    tuned_alpha: float | None = None
    held_out_r5: float | None = None
    held_out_r10: float | None = None
    held_out: int = 0  # questions in the held-out half


def minmax(x: Array) -> Array:
    """The list's scores onto [0, 1]; a list that does not tell its turns apart (all equal) counts 0."""
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def evidence_recall(
    ids: Sequence[str], rows: Sequence[int] | Array, evidence: Sequence[str], k: int
) -> float:
    """Recall@k of the turns at `rows`, in order, scored as the floors are (`locomo_data.recall_at_k`)."""
    return recall_at_k([(ids[int(j)],) for j in rows], evidence, k)


def weight_recalls(q: Scored, alphas: Array = ALPHAS) -> Array:
    """(len(alphas), 2): R@5 and R@10 of the fusion at each weight."""
    c, lx = minmax(q.cos), minmax(q.lex)
    # In the arrays' own precision, so that α = 0.5 ranks (ties included) exactly as the simple hybrid floor.
    w = np.asarray(alphas).astype(np.result_type(c, lx))[:, None]
    scores = w * c + (1 - w) * lx
    # All weights in one stable sort, as the floors' `top` sorts one list: the ~2,700 questions of the three
    # sets times 21 weights take a few seconds, not minutes.
    order = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    return np.array([[evidence_recall(q.ids, o, q.evidence, k) for k in (5, K)] for o in order])


def pool_share(q: Scored, depth: int = POOL) -> float:
    """Share of the evidence among the top `depth` by cosine and the top `depth` BM25 matches. A turn that
    shares no term with the question is no BM25 candidate (the index never returns it), however few match."""
    by_cos = np.argsort(-q.cos, kind="stable")[:depth]
    matched = np.flatnonzero(q.lex > 0)
    by_lex = matched[np.argsort(-q.lex[matched], kind="stable")[:depth]]
    rows = np.union1d(by_cos, by_lex)
    return evidence_recall(q.ids, rows, q.evidence, len(rows))


def _best(r: Array) -> int:
    """The weight with the best mean R@10, then R@5; the lower α on a tie. `r`: (questions, weights, 2)."""
    means = r.mean(axis=0)
    return max(range(len(means)), key=lambda i: (means[i, 1], means[i, 0], -i))


def bound(questions: Sequence[Scored], alphas: Array = ALPHAS, depth: int = POOL) -> FusionBound:
    if not questions:
        raise ValueError("a fusion bound over no question")
    r = np.stack([weight_recalls(q, alphas) for q in questions])  # (questions, weights, 2)
    best = _best(r)
    oracle = r.max(axis=1).mean(axis=0)  # each question at its best weight, for R@5 and for R@10 apart
    tuned = np.array([q.tuned for q in questions])
    tuned_alpha = held5 = held10 = None
    if tuned.any() and not tuned.all():
        chosen = _best(r[tuned])
        tuned_alpha = float(alphas[chosen])
        held5, held10 = (float(x) for x in r[~tuned, chosen].mean(axis=0))
    return FusionBound(
        questions=len(questions),
        alpha=float(alphas[best]),
        r5=float(r[:, best, 0].mean()),
        r10=float(r[:, best, 1].mean()),
        oracle_r5=float(oracle[0]),
        oracle_r10=float(oracle[1]),
        pool=float(np.mean([pool_share(q, depth) for q in questions])),
        depth=depth,
        tuned_alpha=tuned_alpha,
        held_out_r5=held5,
        held_out_r10=held10,
        held_out=int((~tuned).sum()),
    )


def report_lines(b: FusionBound, best_floor: tuple[float, float], margin: float) -> list[str]:
    """A paragraph and a table for a set's section of the quality report, beside its target (the best floor's
    R@5 and R@10 plus `margin`)."""
    lines = [
        "Fusion bound (optimistic: weights chosen on the answers; not a ranker; `bench/fusion_frontier.py`): "
        "α·min-max(cosine) + (1 − α)·min-max(BM25) over every turn of the conversation, α = 0, 0.05, …, 1 "
        "(0.5 is the simple hybrid floor). Where the oracle is below the target, no weighting of these two "
        "lists on this grid reaches it, not even one chosen per question; where the candidate pool is, no "
        "reranker of their top turns does.",
        "",
        "| fusion | α | R@5 | R@10 | n |",
        "|---|---:|---:|---:|---:|",
        f"| best fixed weight, chosen on every answer | {b.alpha:.2f} | {b.r5:.3f} | {b.r10:.3f} "
        f"| {b.questions:,} |",
    ]
    if b.tuned_alpha is not None and b.held_out_r5 is not None and b.held_out_r10 is not None:
        lines.append(
            f"| fixed weight chosen on the tuned half, on the held-out half (measured) | {b.tuned_alpha:.2f} "
            f"| {b.held_out_r5:.3f} | {b.held_out_r10:.3f} | {b.held_out:,} |"
        )
    lines += [
        f"| per-question oracle weight | each its own | {b.oracle_r5:.3f} | {b.oracle_r10:.3f} "
        f"| {b.questions:,} |",
        f"| target: best floor + {margin:.2f} |  | {best_floor[0] + margin:.3f} "
        f"| {best_floor[1] + margin:.3f} |  |",
        "",
        f"Candidate pool: the top {b.depth} turns by cosine and the top {b.depth} BM25 matches hold "
        f"{b.pool:.3f} of the evidence, the most any reranker of those candidates could recall.",
    ]
    return lines
