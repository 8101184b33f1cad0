"""Fusing ranked lists and weighting candidates: the pure half of recall.

`normalised` (min-max per list, weighted sum) fuses a cosine in [-1, 1] with an unbounded BM25 score; it
beat reciprocal rank fusion on LoCoMo, which issue 45 deleted with the other parts that did not pay.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pipeline.review.quality import SOURCE_TRUST, UNKNOWN_TRUST

K = TypeVar("K", bound=Hashable)

__all__ = [
    "SOURCE_TRUST",
    "UNKNOWN_TRUST",
    "Factors",
    "normalised",
    "order_turns",
    "passage_cosine",
]
# A semantic memory stands for several consistent episodes: it outranks any one of them (DESIGN §2).
SEMANTIC_BOOST = 1.2


def normalised(
    lists: Mapping[str, Sequence[tuple[K, float]]], *, weights: Mapping[str, float]
) -> dict[K, float]:
    """Σ weight × (score − min) / (max − min) per list; a list of one equal score counts 1 for each."""
    fused: dict[K, float] = {}
    for name, ranked in lists.items():
        if not ranked:
            continue
        w = weights.get(name, 1.0)
        scores = [s for _, s in ranked]
        lo, hi = min(scores), max(scores)
        for key, s in ranked:
            part = (s - lo) / (hi - lo) if hi > lo else 1.0
            fused[key] = fused.get(key, 0.0) + w * part
    return fused


@dataclass(frozen=True, slots=True)
class Factors:
    """Everything that multiplies a candidate's fused relevance, named for `explain`."""

    weight: float
    trust: float
    semantic: float = 1.0  # SEMANTIC_BOOST for semantic memories
    window: float = 1.0  # inside the time window the query names
    superseded: float = 1.0  # history mode: what a newer fact replaced ranks below what replaced it
    speaker: float = 1.0  # spoken by the one person the query names

    def product(self) -> float:
        return self.weight * self.trust * self.semantic * self.window * self.superseded * self.speaker


def passage_cosine(cosine: float, discount: float) -> float:
    """A passage's cosine as evidence for its whole turn, less `discount`: a long reply holds many windows,
    and the best of many windows beats most short turns by chance alone (a main vector is one draw and is
    never discounted). See `RecallTuning.passage_discount` for what was measured."""
    return cosine - discount


def ranked_weight(weight: float, base_weight: float | None, decay_exponent: float) -> float:
    """The weight a memory ranks with: base_weight x decay ** decay_exponent, where decay = weight /
    base_weight (DESIGN §2: weight = base_weight x exp(-rate x idle days)). Exponent 1 is the weight."""
    if base_weight is None or base_weight <= 0 or decay_exponent == 1.0:
        return weight
    return base_weight * min(weight / base_weight, 1.0) ** decay_exponent


def order_turns(turn_ids: Sequence[str], relevance: Mapping[str, float]) -> tuple[str, ...]:
    """A semantic memory's provenance, most relevant member first (stable for members not scored)."""
    unique = list(dict.fromkeys(turn_ids))
    position = {t: i for i, t in enumerate(unique)}
    return tuple(sorted(unique, key=lambda t: (-relevance.get(t, 0.0), position[t])))
