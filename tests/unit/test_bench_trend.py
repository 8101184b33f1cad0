"""The soak's memory verdict: slope, warm-up cut, growth and trend against the allowance."""

from __future__ import annotations

import random

import pytest

from bench import trend


def test_slope_is_the_least_squares_fit() -> None:
    xs = [0.0, 1.0, 2.0, 3.0]
    assert trend.slope(xs, [1.0, 3.0, 5.0, 7.0]) == pytest.approx(2.0)
    assert trend.slope(xs, [5.0, 5.0, 5.0, 5.0]) == 0.0
    assert trend.slope([1.0, 1.0], [0.0, 9.0]) == 0.0  # no spread in x: no slope to speak of
    with pytest.raises(ValueError, match="3 xs against 2 ys"):
        trend.slope([1.0, 2.0, 3.0], [1.0, 2.0])


def test_flat_noisy_memory_after_a_warm_up_climb_is_bounded() -> None:
    rng = random.Random(1)
    # Climbs from 300 to 600 MB over the first 10% (model load, first batches), then flat with noise.
    points = [
        (x, 300 + 3 * x / 200 if x < 20_000 else 600 + rng.uniform(-15, 15)) for x in range(0, 200_001, 1000)
    ]
    t = trend.assess(points)
    assert t.bounded
    assert abs(t.slope_mb_per_100k) < 10
    assert t.warm_mb == pytest.approx(600, abs=15)
    assert t.samples == sum(1 for x, _ in points if x >= 40_000)


def test_a_steady_leak_is_not_bounded() -> None:
    # 1 KB per turn: 200 MB over 200,000 turns, well past max(64 MB, 10% of 500 MB).
    points = [(float(x), 500 + x / 1000) for x in range(0, 200_001, 2000)]
    t = trend.assess(points)
    assert not t.bounded
    assert t.slope_mb_per_100k == pytest.approx(100.0)
    assert t.growth_mb == pytest.approx(156, abs=1)  # median of the 3 first and 3 last samples
    assert t.projected_mb == pytest.approx(160, abs=1)


def test_a_leak_within_the_allowance_passes_and_a_bigger_allowance_can_be_given() -> None:
    points = [(float(x), 1000 + x / 10_000) for x in range(0, 100_001, 1000)]  # +8 MB after warm-up
    assert trend.assess(points).bounded
    assert not trend.assess(points, allowance_mb=5, allowance_fraction=0.0).bounded


def test_the_allowance_is_a_fraction_of_large_processes() -> None:
    t = trend.assess([(float(x), 2000.0) for x in range(10)])
    assert t.allowance_mb == pytest.approx(200.0)  # 10% of 2,000 MB beats 64 MB


def test_a_short_series_uses_its_last_samples() -> None:
    t = trend.assess([(0.0, 100.0), (1.0, 100.0), (2.0, 100.0)])
    assert t.samples == 3
    assert t.bounded
    with pytest.raises(ValueError, match="no samples"):
        trend.assess([])
