"""Forgetting by disuse. Pure: weights and times in, weights out (DESIGN §2).

weight = w0 · exp(−λ · days since last access); with λ = 0.05 a memory left alone for 30 days keeps
≈ 0.22 of its weight, and below `cold_below` (0.1, ≈ 46 idle days from 1.0) it moves to cold storage.
Core memories (identity, allergies, long-term preferences) never decay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class DecayParams:
    rate_per_day: float = 0.05  # λ
    cold_below: float = 0.1


def decayed_weight(
    base_weight: float, last_access: datetime, now: datetime, *, rate_per_day: float, core: bool = False
) -> float:
    """w0 · exp(−λ · idle days). Idle time never counts negative (a clock behind `last_access` means 0)."""
    if core:
        return base_weight
    idle_days = max((now - last_access).total_seconds(), 0.0) / SECONDS_PER_DAY
    return base_weight * math.exp(-rate_per_day * idle_days)


def days_until_cold(base_weight: float, *, rate_per_day: float, cold_below: float) -> float:
    """Idle days after which a memory of weight `base_weight` reaches `cold_below` (inf if it never does)."""
    if base_weight <= cold_below:
        return 0.0
    if rate_per_day <= 0:
        return math.inf
    return math.log(base_weight / cold_below) / rate_per_day
