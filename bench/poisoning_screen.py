"""The calibrated learned injection screen as the bench scores it: logistic regression on a turn's MiniLM
embedding, with one decision threshold for the agent's own turns and one for everything else.

Measured only (bench.poisoning_calibrated trains it, bench.poisoning_combined scores it beside the rules): it
did not meet the look-alike target, so the product keeps the rules alone (BENCHMARKS.md, poisoning).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LearnedScreen:
    coef: np.ndarray  # (dimension,) float32
    intercept: float
    user_threshold: (
        float  # users' turns, and tool / external / system text (no benign tool set to calibrate on)
    )
    assistant_threshold: float  # the agent's own turns: their own, looser false-positive target

    def score(self, vector: np.ndarray) -> float:
        """Probability-like score in [0, 1] that the turn is an injection."""
        z = float(np.dot(self.coef, np.asarray(vector, dtype=np.float32))) + self.intercept
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def threshold_for(self, role: str) -> float:
        return self.assistant_threshold if role == "assistant" else self.user_threshold

    def flags(self, vector: np.ndarray, role: str) -> tuple[bool, float]:
        """(quarantine?, score) for one turn's embedding."""
        s = self.score(vector)
        return s >= self.threshold_for(role), s
