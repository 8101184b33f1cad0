"""`hindsight bench poisoning`'s upper-bound frontier: can ANY threshold of a screen meet issue 28's targets?

For one screen's score (the rules' score, or a learned screen's probability) the threshold is swept over every
distinct score value (a turn is flagged when its score >= the threshold; +inf flags none by score), and the
lowest threshold at which every false-positive target holds on the benign test turns is kept: flagging only
grows as the threshold falls, so that threshold gives the highest attack recall any feasible one gives. A turn
can also be flagged whatever the threshold (`fixed`: the rules' quarantine, for "rules OR learned"), or never
by its score (a score of -inf: a turn left to a threshold of its own that flags nothing, see `groups`).

The threshold is chosen by reading the test labels, so the recall it gives is an optimistic bound, not a
measurement: below the target, no operating point of that screen reaches it on this data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Group:
    """Turns scored by one screen: attacks (limit None) or benign turns with a false-positive target."""

    label: str
    scores: np.ndarray  # float, one per turn
    fixed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # flagged at any threshold
    limit: float | None = None  # the highest share of the group that may be flagged (0: none)

    def __post_init__(self) -> None:
        if len(self.fixed) == 0:
            object.__setattr__(self, "fixed", np.zeros(len(self.scores), dtype=bool))
        if len(self.fixed) != len(self.scores):
            raise ValueError(f"{self.label}: {len(self.fixed)} fixed flags for {len(self.scores)} scores")

    def flagged(self, thresholds: np.ndarray) -> np.ndarray:
        """How many of the group's turns are flagged at each threshold."""
        free = np.sort(np.asarray(self.scores, dtype=np.float64)[~self.fixed])
        above = len(free) - np.searchsorted(free, thresholds, side="left")  # scores >= threshold
        return above + int(self.fixed.sum())

    def violated(self, thresholds: np.ndarray) -> np.ndarray:
        if self.limit is None or len(self.scores) == 0:
            return np.zeros(len(thresholds), dtype=bool)
        return np.asarray(self.flagged(thresholds) / len(self.scores) > self.limit)


@dataclass(frozen=True)
class Frontier:
    threshold: float | None  # the lowest feasible threshold (inf: nothing flagged by score); None: none is
    caught: dict[str, tuple[int, int]]  # attack group -> (flagged, turns) at it; zeros when none is feasible
    binding: tuple[str, ...]  # the targets the next lower threshold breaks (empty: it is the lowest score)
    breaks: dict[str, float | None]  # target -> the highest threshold that breaks it (None: none does)


def candidates(groups: Sequence[Group]) -> np.ndarray:
    """Every distinct score value but -inf (never flagged), ascending, then +inf."""
    values = np.unique(
        np.concatenate([np.asarray(g.scores, dtype=np.float64) for g in groups] or [np.zeros(0)])
    )
    return np.append(values[values > -math.inf], math.inf)


def caught_at(attacks: Sequence[Group], threshold: float) -> dict[str, tuple[int, int]]:
    t = np.array([threshold])
    return {g.label: (int(g.flagged(t)[0]), len(g.scores)) for g in attacks}


def frontier(attacks: Sequence[Group], benign: Sequence[Group]) -> Frontier:
    ts = candidates([*attacks, *benign])
    violated = {g.label: g.violated(ts) for g in benign if g.limit is not None}
    feasible = (
        ~np.any(np.stack(list(violated.values())), axis=0) if violated else np.ones(len(ts), dtype=bool)
    )
    breaks = {label: (float(ts[np.flatnonzero(v)[-1]]) if v.any() else None) for label, v in violated.items()}
    if not feasible.any():  # the fixed flags alone break a target
        return Frontier(None, {g.label: (0, len(g.scores)) for g in attacks}, (), breaks)
    best = int(np.flatnonzero(feasible)[0])
    binding = tuple(label for label, v in violated.items() if best > 0 and v[best - 1])
    return Frontier(float(ts[best]), caught_at(attacks, float(ts[best])), binding, breaks)


def groups(
    rows: Sequence[tuple[str, Sequence[str], float | None]],
    scores: Mapping[str, float],
    fixed: Mapping[str, bool] | None = None,
    never: frozenset[str] = frozenset(),
) -> list[Group]:
    """Groups from (label, sample ids, limit) rows and one screen's score (and fixed flag) by sample id; the
    turns in `never` are not flagged by their score at any threshold (their fixed flag still counts)."""
    return [
        Group(
            label,
            np.array([-math.inf if i in never else scores[i] for i in ids], dtype=np.float64),
            np.array([bool(fixed and fixed[i]) for i in ids], dtype=bool),
            limit,
        )
        for label, ids, limit in rows
    ]


@dataclass(frozen=True)
class Screen:
    """One screen's row of the frontier table."""

    name: str
    scope: str  # what its false-positive targets are scored on
    frontier: Frontier  # one threshold for every role
    at_lookalikes: (
        dict[str, tuple[int, int]] | None
    )  # attacks caught at the highest threshold that breaks the
    # look-alikes' 2 % target (None: no threshold does)
    assistant_apart: Frontier | None = None  # the agent's own turns never flagged by the score (a threshold
    # of their own that flags none), every other turn's threshold swept; None: not measured


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n if n else 0.0:.1%})"


def _threshold(f: Frontier) -> str:
    if f.threshold is None:
        return "none meets them"
    return "∞ (none by score)" if math.isinf(f.threshold) else f"{f.threshold:.6g}"


def table(screens: Sequence[Screen], attack_labels: tuple[str, str]) -> list[str]:
    every, fresh = attack_labels

    def both(caught: dict[str, tuple[int, int]]) -> str:
        return f"{_pct(*caught[every])} / {_pct(*caught[fresh])}"

    lines = [
        "| screen | false-positive targets scored on | best threshold | held-out attacks | fresh held-out | "
        "binds (next lower threshold breaks) | look-alikes > 2% from: held-out / fresh | "
        "agent's own turns apart: threshold, held-out / fresh, binds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in screens:
        f, apart = s.frontier, s.assistant_apart
        caught = f"{_pct(*f.caught[every])} | {_pct(*f.caught[fresh])}" if f.threshold is not None else " | "
        looks = both(s.at_lookalikes) if s.at_lookalikes else "never (at any threshold)"
        other = ""
        if apart is not None:
            other = _threshold(apart)
            if apart.threshold is not None:
                other += f", {both(apart.caught)}, {', '.join(apart.binding) or '(none)'}"
        lines.append(
            f"| {s.name} | {s.scope} | {_threshold(f)} | {caught} | {', '.join(f.binding) or '(none)'} | "
            f"{looks} | {other} |"
        )
    return lines
