"""The decay curve: closed-form values, monotonicity, the core exemption."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.forgetting.decay import DecayParams, days_until_cold, decayed_weight

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RATE = DecayParams().rate_per_day


@pytest.mark.parametrize(
    ("w0", "idle_days", "expected"),
    [
        (1.0, 0, 1.0),
        (1.0, 30, math.exp(-1.5)),  # ≈ 0.2231: the design's "≈ 0.22 after 30 idle days"
        (1.0, 60, math.exp(-3.0)),  # ≈ 0.0498: below 0.1, cold
        (0.5, 14, 0.5 * math.exp(-0.7)),
        (2.0, 1, 2.0 * math.exp(-0.05)),
    ],
)
def test_closed_form(w0: float, idle_days: float, expected: float) -> None:
    now = T0 + timedelta(days=idle_days)
    assert decayed_weight(w0, T0, now, rate_per_day=RATE) == pytest.approx(expected, rel=1e-12)


def test_thirty_idle_days_leave_about_a_fifth() -> None:
    assert round(decayed_weight(1.0, T0, T0 + timedelta(days=30), rate_per_day=RATE), 2) == 0.22


def test_days_until_cold_matches_the_curve() -> None:
    days = days_until_cold(1.0, rate_per_day=RATE, cold_below=0.1)
    assert days == pytest.approx(math.log(10) / RATE)
    assert decayed_weight(1.0, T0, T0 + timedelta(days=days), rate_per_day=RATE) == pytest.approx(0.1)
    assert days_until_cold(0.05, rate_per_day=RATE, cold_below=0.1) == 0.0
    assert days_until_cold(1.0, rate_per_day=0.0, cold_below=0.1) == math.inf


weights = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
days = st.floats(min_value=0.0, max_value=3650.0, allow_nan=False)
rates = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(weights, days, days, rates)
def test_weight_never_rises_with_idle_time(w0: float, a: float, b: float, rate: float) -> None:
    early, late = sorted((a, b))
    w_early = decayed_weight(w0, T0, T0 + timedelta(days=early), rate_per_day=rate)
    w_late = decayed_weight(w0, T0, T0 + timedelta(days=late), rate_per_day=rate)
    assert 0.0 <= w_late <= w_early <= w0


@given(weights, days, rates)
def test_core_memories_never_decay(w0: float, idle: float, rate: float) -> None:
    assert decayed_weight(w0, T0, T0 + timedelta(days=idle), rate_per_day=rate, core=True) == w0


@given(weights, days)
def test_a_clock_behind_the_last_access_counts_as_no_idle_time(w0: float, behind: float) -> None:
    assert decayed_weight(w0, T0, T0 - timedelta(days=behind), rate_per_day=RATE) == w0
