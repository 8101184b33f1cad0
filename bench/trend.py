"""Is a memory series bounded? Pure logic for the soak: a least-squares slope after warm-up, and the growth
from just after warm-up to the end, each against an allowance."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

PER = 100_000  # slopes are given in MB per this many turns
WARM_FRACTION = 0.2  # samples before this share of the run are warm-up (imports, caches, first batches)
EDGE = 3  # samples whose median stands for "after warm-up" and for "at the end"
ALLOWANCE_MB = 64.0
ALLOWANCE_FRACTION = 0.10


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys over xs (0 when xs do not vary)."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} xs against {len(ys)} ys")
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var


@dataclass(frozen=True)
class Trend:
    samples: int  # after warm-up
    warm_mb: float  # median of the first EDGE samples after warm-up
    end_mb: float  # median of the last EDGE samples
    peak_mb: float
    slope_mb_per_100k: float
    projected_mb: float  # growth the fitted slope predicts over the measured span
    allowance_mb: float
    bounded: bool

    @property
    def growth_mb(self) -> float:
        return self.end_mb - self.warm_mb


def assess(
    points: Sequence[tuple[float, float]],
    *,
    warm_fraction: float = WARM_FRACTION,
    edge: int = EDGE,
    allowance_mb: float = ALLOWANCE_MB,
    allowance_fraction: float = ALLOWANCE_FRACTION,
) -> Trend:
    """points: (turns processed, MB). Bounded when neither the end-minus-warm growth nor the fitted trend over
    the span exceeds max(allowance_mb, allowance_fraction × the warm figure). A leak of a few KB a turn shows
    in both; a one-off step (a cache filling) shows in the growth only if it is large."""
    if not points:
        raise ValueError("no samples")
    ordered = sorted(points)
    first_x, last_x = ordered[0][0], ordered[-1][0]
    cut = first_x + warm_fraction * (last_x - first_x)
    post = [p for p in ordered if p[0] >= cut]
    if len(post) < 2 * edge:
        post = ordered[-2 * edge :] if len(ordered) >= 2 * edge else ordered
    xs, ys = [p[0] for p in post], [p[1] for p in post]
    k = max(1, min(edge, len(post) // 2))
    warm, end = statistics.median(ys[:k]), statistics.median(ys[-k:])
    per_turn = slope(xs, ys)
    projected = per_turn * (xs[-1] - xs[0])
    allowance = max(allowance_mb, allowance_fraction * warm)
    bounded = end - warm <= allowance and projected <= allowance
    return Trend(len(post), warm, end, max(ys), per_turn * PER, projected, allowance, bounded)
